package handlers_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

// TestGroupInfoMembersBounded: shed_group info lists at most 100 members, with the total
// count, and the INVALID_OWNER hint names a bounded few.
func TestGroupInfoMembersBounded(t *testing.T) {
	e := startLinks(t, nil)
	for i := range 130 {
		e.seen(fmt.Sprintf("u%03d", i), "team")
	}
	r := e.post("shed_group_info", map[string]any{"group": "team"}, member("alice", "team"))
	wantOK(t, r)
	if n := len(memberIDs(t, r)); n != 100 || r.Data["member_count"] != 131.0 || r.Data["members_truncated"] != true {
		t.Fatalf("%d members listed, count %v, truncated %v", n, r.Data["member_count"], r.Data["members_truncated"])
	}
	wantOK(t, e.post("shed_create_file", inTeam(map[string]any{"path": "a.md", "content": "x", "mode": "owner"}), member("alice", "team")))
	r = e.chownAs("alice", "a.md", "zed")
	wantError(t, r, "INVALID_OWNER")
	if len(r.Hint) > 400 || !strings.Contains(r.Hint, "more") {
		t.Fatalf("hint not bounded: %d bytes: %s", len(r.Hint), r.Hint)
	}
}

// TestGroupChownRacesSetMode: the owner's chown and set_mode, and the new owner's set_mode,
// racing on one file, end as some order of the three would: no change is lost (a set_mode
// that read the record before a chown must not write the old owner back).
func TestGroupChownRacesSetMode(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.seen("bob", "team")
	type op struct{ user, tool, arg string }
	ops := []op{{"alice", "shed_group_chown", "bob"}, {"alice", "shed_group_set_mode", "owner"}, {"bob", "shed_group_set_mode", "owner_ro"}}
	for round := range 25 {
		path := fmt.Sprintf("f%02d.md", round)
		wantOK(t, e.post("shed_create_file", inTeam(map[string]any{"path": path, "content": "x", "mode": "group"}), member("alice", "team")))
		ok := make([]bool, len(ops))
		var wg sync.WaitGroup
		for i, o := range ops {
			wg.Add(1)
			go func() {
				defer wg.Done()
				args := map[string]any{"group": "team", "path": path, "new_owner": o.arg, "mode": o.arg}
				h := member(o.user, "team")
				h["X-OpenWebUI-Chat-Id"] = fmt.Sprintf("c-%d", i)
				r := e.post(o.tool, args, h)
				if !r.Success && r.Error != "NOT_FILE_OWNER" {
					t.Errorf("%s %s: %s", o.user, o.tool, r.raw)
				}
				ok[i] = r.Success
			}()
		}
		wg.Wait()
		owner, mode := groupRecord(t, e, path)
		// Some serial order of the three must give the same answers and the same record.
		explained := false
		for _, perm := range [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
			o, m, got := "alice", "group", make([]bool, 3)
			for _, i := range perm {
				switch {
				case i == 0 && o == "alice":
					o, got[i] = "bob", true
				case i == 1 && o == "alice":
					m, got[i] = "owner", true
				case i == 2 && o == "bob":
					m, got[i] = "owner_ro", true
				}
			}
			if slices.Equal(got, ok) && o == owner && m == mode {
				explained = true
			}
		}
		if !explained {
			t.Fatalf("round %d: answers %v end with owner %s, mode %s: no order of the calls gives that", round, ok, owner, mode)
		}
	}
}

// groupRecord is the owner and mode of a team file, from shed_group info.
func groupRecord(t *testing.T, e *env, path string) (owner, mode string) {
	t.Helper()
	r := e.post("shed_group_info", map[string]any{"group": "team"}, member("alice", "team"))
	for _, f := range r.Data["files"].([]any) {
		if m := f.(map[string]any); m["path"] == path {
			return m["owner"].(string), m["mode"].(string)
		}
	}
	t.Fatalf("%s not in info: %s", path, r.raw)
	return "", ""
}

// TestGroupMembersJWTGroupsClaim: in jwt mode a groups claim in the signed token is the
// caller's groups: members are seen, chown works, and a link stops once the creator's
// token no longer lists the group.
func TestGroupMembersJWTGroupsClaim(t *testing.T) {
	const secret = "jwt-secret-groups-0123"
	e := startLinks(t, map[string]string{"FILESHED_AUTH_MODE": "jwt", "FILESHED_AUTH_JWT_SECRET": secret})
	jwtAs := func(user string, groups ...string) map[string]string {
		tok := signJWT(t, "HS256", secret, map[string]any{"sub": user, "name": "User " + user, "groups": groups, "iss": "open-webui",
			"exp": time.Now().Add(time.Hour).Unix()})
		return map[string]string{"Authorization": "Bearer " + linksKey, "X-OpenWebUI-User-Jwt": tok}
	}
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, jwtAs("bob", "team")))
	wantOK(t, e.post("shed_create_file", inTeam(map[string]any{"path": "a.md", "content": "x", "mode": "owner"}), jwtAs("alice", "team")))
	r := e.post("shed_group_info", map[string]any{"group": "team"}, jwtAs("alice", "team"))
	wantOK(t, r)
	if r.Data["member_count"] != 2.0 || r.Data["members_source"] != "seen" {
		t.Fatalf("info: %s", r.raw)
	}
	wantOK(t, e.post("shed_group_chown", map[string]any{"group": "team", "path": "a.md", "new_owner": "bob"}, jwtAs("alice", "team")))
	url := e.post("shed_link_create", inTeam(map[string]any{"path": "a.md"}), jwtAs("alice", "team")).Data["url"].(string)
	if g := e.get("GET", url, nil); g.status != 200 {
		t.Fatalf("link: %d", g.status)
	}
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, jwtAs("alice", "ops")))
	if g := e.get("GET", url, nil); g.status != http.StatusGone {
		t.Fatalf("link of a creator whose token no longer lists the group: %d", g.status)
	}
}

// sessionMembers starts a session-mode server over a fake Open WebUI that, like recent
// versions, sends no member lists with the groups: g-eng holds alice, bob and erin; carol
// is in no group. adminKey sets openwebui.admin_api_key (the fake's admin token).
func sessionMembers(t *testing.T, adminKey string) (*env, *owuitest.Server) {
	fake := owuitest.New(t)
	fake.OmitMemberLists(true)
	for _, u := range []string{"alice", "bob", "carol", "erin"} {
		fake.AddUser("tok-"+u, owui.User{ID: u, Name: strings.ToUpper(u[:1]) + u[1:], Role: "user"})
	}
	fake.AddUser("sk-admin", owui.User{ID: "admin", Name: "Admin", Role: "admin"})
	fake.AddGroup(owui.Group{ID: "g-eng", Name: "Engineering", UserIDs: []string{"alice", "bob", "erin"}})
	vars := map[string]string{"FILESHED_AUTH_MODE": "session", "FILESHED_OPENWEBUI_URL": fake.URL}
	if adminKey != "" {
		vars["FILESHED_OPENWEBUI_ADMIN_API_KEY"] = adminKey
	}
	return startLinks(t, vars), fake
}

// session is the headers of a session-mode request of user.
func session(user string) map[string]string {
	return map[string]string{"Authorization": "Bearer tok-" + user, "X-OpenWebUI-Chat-Id": "c-" + user}
}

// TestGroupMembersSessionSeen: without an admin key the members are those seen; a forged
// X-Shed-Groups is ignored in session mode (groups come from Open WebUI only).
func TestGroupMembersSessionSeen(t *testing.T) {
	t.Parallel()
	e, _ := sessionMembers(t, "")
	forged := session("carol")
	forged["X-Shed-Groups"] = "g-eng"
	wantError(t, e.post("shed_group_info", map[string]any{"group": "g-eng"}, forged), "GROUP_ACCESS_DENIED")
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, forged))
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, session("bob")))
	g := map[string]any{"zone": "group", "group": "g-eng"}
	g["path"], g["content"], g["mode"] = "a.md", "x", "owner"
	wantOK(t, e.post("shed_create_file", g, session("alice")))
	r := e.post("shed_group_info", map[string]any{"group": "g-eng"}, session("alice"))
	wantOK(t, r)
	if ids := memberIDs(t, r); len(ids) != 2 || !slices.Contains(ids, "bob") || r.Data["members_complete"] != false {
		t.Fatalf("members: %s", r.raw)
	}
	chown := func(to string) reply {
		return e.post("shed_group_chown", map[string]any{"group": "g-eng", "path": "a.md", "new_owner": to}, session("alice"))
	}
	wantError(t, chown("carol"), "INVALID_OWNER")
	wantError(t, chown("erin"), "INVALID_OWNER") // a real member, never seen: nobody can tell
	wantOK(t, chown("bob"))
}

// TestGroupMembersSessionAdminKey: with openwebui.admin_api_key the member list comes from
// Open WebUI and is complete (a member never seen can receive a file), and a link whose
// creator was deleted from Open WebUI answers 410.
func TestGroupMembersSessionAdminKey(t *testing.T) {
	t.Parallel()
	e, fake := sessionMembers(t, "sk-admin")
	g := map[string]any{"zone": "group", "group": "g-eng", "path": "a.md", "content": "x", "mode": "owner"}
	wantOK(t, e.post("shed_create_file", g, session("alice")))
	r := e.post("shed_group_info", map[string]any{"group": "g-eng"}, session("alice"))
	wantOK(t, r)
	if r.Data["member_count"] != 3.0 || r.Data["members_complete"] != true || r.Data["members_source"] != "openwebui" ||
		!strings.Contains(r.raw, `"name":"Erin"`) {
		t.Fatalf("members: %s", r.raw)
	}
	wantError(t, e.post("shed_group_chown", map[string]any{"group": "g-eng", "path": "a.md", "new_owner": "carol"}, session("alice")), "INVALID_OWNER")
	link := e.post("shed_link_create", map[string]any{"zone": "group", "group": "g-eng", "path": "a.md"}, session("alice"))
	wantOK(t, link)
	url := link.Data["url"].(string)
	wantOK(t, e.post("shed_group_chown", map[string]any{"group": "g-eng", "path": "a.md", "new_owner": "erin"}, session("alice")))
	if d := e.get("GET", url, nil); d.status != 200 {
		t.Fatalf("link: %d", d.status)
	}
	fake.RemoveUser("alice")
	if d := e.get("GET", url, nil); d.status != http.StatusGone || !strings.Contains(d.body, "no longer a member") {
		t.Fatalf("link of a creator deleted from Open WebUI: %d %q", d.status, d.body)
	}
}

// TestSessionAdminIsNoMemberOfOthersGroups: Open WebUI lists every group to an administrator
// (GET /api/v1/groups/), and recent versions send no member lists; an administrator who is
// not a member must not enter a group's space, nor see it listed, in either shape.
func TestSessionAdminIsNoMemberOfOthersGroups(t *testing.T) {
	for _, omit := range []bool{true, false} {
		e, fake := sessionMembers(t, "")
		fake.OmitMemberLists(omit)
		fake.AddGroup(owui.Group{ID: "g-ops", Name: "Ops", UserIDs: []string{"admin"}})
		admin := map[string]string{"Authorization": "Bearer sk-admin", "X-OpenWebUI-Chat-Id": "c-admin"}
		wantError(t, e.post("shed_group_info", map[string]any{"group": "g-eng"}, admin), "GROUP_ACCESS_DENIED")
		wantError(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "g-eng"}, admin), "GROUP_ACCESS_DENIED")
		r := e.post("shed_group_list", map[string]any{}, admin)
		wantOK(t, r)
		if strings.Contains(r.raw, "g-eng") || !strings.Contains(r.raw, "g-ops") {
			t.Fatalf("omit member lists %v: an administrator's groups: %s", omit, r.raw)
		}
		wantOK(t, e.post("shed_group_info", map[string]any{"group": "g-eng"}, session("alice")))
	}
}
