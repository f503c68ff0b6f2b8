package handlers_test

import (
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

// linkSwap adds to swap the token and the id of the link answer r (secrets and random
// values, never written to a golden file), numbered n.
func linkSwap(t *testing.T, swap map[string]string, r reply, n string) {
	t.Helper()
	wantOK(t, r)
	url, _ := r.Data["url"].(string)
	_, tok, ok := strings.Cut(url, "/dl/")
	id, _ := r.Data["link_id"].(string)
	if !ok || id == "" {
		t.Fatalf("not a link answer: %s", r.raw)
	}
	swap[tok], swap[id] = "<token"+n+">", "<id"+n+">"
}

// TestGoldenLinks pins the answers of shed_link_create (a file, an empty file, a folder, a
// group file), shed_link_list (active links of each kind and a revoked one) and
// shed_link_delete, byte for byte.
func TestGoldenLinks(t *testing.T) {
	e := startLinks(t, nil)
	alice := member("alice", "team")
	swap := map[string]string{e.srv.URL: "<server>"}
	e.write("users/alice/Storage/data/docs/report [final].csv", "a,b\n1,2\n")
	e.write("users/alice/Storage/data/empty.txt", "")
	wantOK(t, e.post("shed_create_file", inTeam(map[string]any{"path": "plan.md", "content": "plan"}), alice))
	calls := []struct {
		name string
		args map[string]any
	}{
		{"links_create_file", map[string]any{"zone": "storage", "path": "docs/report [final].csv", "max_downloads": 3}},
		{"links_create_empty_file", map[string]any{"zone": "storage", "path": "empty.txt"}},
		{"links_create_folder", map[string]any{"zone": "storage", "path": "docs", "expires_hours": 2}},
		{"links_create_group_file", inTeam(map[string]any{"path": "plan.md"})},
	}
	answers := make([]reply, len(calls))
	for i, c := range calls {
		answers[i] = e.post("shed_link_create", c.args, alice)
		linkSwap(t, swap, answers[i], string(rune('1'+i)))
	}
	for i, c := range calls {
		pinGolden(t, c.name, answers[i], swap, "expires_at")
	}
	del := e.post("shed_link_delete", map[string]any{"link_id": answers[1].Data["link_id"]}, alice)
	pinGolden(t, "links_delete", del, swap)
	pinGolden(t, "links_list", e.post("shed_link_list", nil, alice), swap, "expires_at", "created_at")
	pinGolden(t, "links_list_empty", e.post("shed_link_list", nil, member("bob", "")), swap)
}

// TestGoldenLinksOpenWebUI pins the answers of links.mode openwebui: create, list, delete.
func TestGoldenLinksOpenWebUI(t *testing.T) {
	fake := owuitest.New(t)
	fake.AddUser("tok-alice", owui.User{ID: "alice", Name: "Alice", Role: "user"})
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "session", "FILESHED_OPENWEBUI_URL": fake.URL,
		"FILESHED_LINKS_MODE": "openwebui"})
	alice := map[string]string{"Authorization": "Bearer tok-alice"}
	e.write("users/alice/Storage/data/out/report [final].csv", "a,b\n1,2\n")
	r := e.post("shed_link_create", map[string]any{"zone": "storage", "path": "out/report [final].csv"}, alice)
	wantOK(t, r)
	swap := map[string]string{fake.URL: "<openwebui>", r.Data["file_id"].(string): "<file_id>"}
	pinGolden(t, "links_owui_create", r, swap)
	pinGolden(t, "links_owui_list", e.post("shed_link_list", nil, alice), swap, "expires_at", "created_at")
	pinGolden(t, "links_owui_delete", e.post("shed_link_delete", map[string]any{"file_id": r.Data["file_id"]}, alice), swap)
}
