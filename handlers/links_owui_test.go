package handlers_test

import (
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

// TestLinkOpenWebUIMode: links.mode openwebui uploads the file into the caller's Open WebUI
// files with the caller's session and answers Open WebUI's content URL (the original's
// behaviour); shed_link_delete removes the copy; another user cannot.
func TestLinkOpenWebUIMode(t *testing.T) {
	t.Parallel()
	fake := owuitest.New(t)
	fake.AddUser("tok-alice", owui.User{ID: "alice", Name: "Alice", Role: "user"})
	fake.AddUser("tok-bob", owui.User{ID: "bob", Name: "Bob", Role: "user"})
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "session", "FILESHED_OPENWEBUI_URL": fake.URL,
		"FILESHED_LINKS_MODE": "openwebui"})
	alice := map[string]string{"Authorization": "Bearer tok-alice"}
	bob := map[string]string{"Authorization": "Bearer tok-bob"}
	e.write("users/alice/Storage/data/out/report [final].csv", "a,b\n1,2\n")
	r := e.post("shed_link_create", map[string]any{"zone": "storage", "path": "out/report [final].csv"}, alice)
	wantOK(t, r)
	id, _ := r.Data["file_id"].(string)
	want := fake.URL + "/api/v1/files/" + id + "/content"
	if r.Data["download_url"] != want || r.Data["clickable_link"] != `[📥 Download report \[final\].csv](`+want+")" {
		t.Fatalf("create: %v", r.Data)
	}
	if got, ok := fake.Content(id); !ok || string(got) != "a,b\n1,2\n" {
		t.Fatalf("Open WebUI holds %q (%v)", got, ok)
	}
	wantError(t, e.post("shed_link_create", map[string]any{"zone": "storage", "path": "out"}, alice), "NOT_A_FILE")
	fake.SetRefuseUploads(true) // Open WebUI's file table did not take the entry: the original's DB_ERROR
	wantError(t, e.post("shed_link_create", map[string]any{"zone": "storage", "path": "out/report [final].csv"}, alice), "DB_ERROR")
	fake.SetRefuseUploads(false)
	l := e.post("shed_link_list", nil, alice)
	if l.Data["count"].(float64) != 1 || !strings.Contains(l.raw, want) {
		t.Errorf("list: %s", l.raw)
	}
	wantError(t, e.post("shed_link_delete", map[string]any{"file_id": id}, bob), "LINK_NOT_FOUND")
	if _, ok := fake.Content(id); !ok {
		t.Fatal("bob deleted alice's copy")
	}
	wantOK(t, e.post("shed_link_delete", map[string]any{"file_id": id}, alice))
	if _, ok := fake.Content(id); ok {
		t.Error("the Open WebUI copy survived shed_link_delete")
	}
	fake.SetDown(true)
	wantError(t, e.post("shed_link_create", map[string]any{"zone": "storage", "path": "out/report [final].csv"}, alice), "AUTH_UNAVAILABLE")
}
