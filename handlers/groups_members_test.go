package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Membership the server has seen (issue 28): in headers mode the server learns a group's
// members only from their own requests (X-Shed-Groups). These tests run without
// groups.static, as a trusted-network deployment does.

// member is the headers of user (named "User <id>") whose request lists groups (comma
// separated; "" sends the header empty: a member of no group).
func member(user, groups string) map[string]string {
	h := as(user)
	h["X-OpenWebUI-User-Name"] = "User " + user
	h["X-Shed-Groups"] = groups
	h["X-OpenWebUI-Chat-Id"] = "c-" + user
	return h
}

// inTeam adds zone=group, group=team to args.
func inTeam(args map[string]any) map[string]any {
	args["zone"], args["group"] = "group", "team"
	return args
}

// seen makes user's request list groups (any request records them).
func (e *env) seen(user, groups string) {
	e.t.Helper()
	wantOK(e.t, e.post("shed_tree", map[string]any{"zone": "storage"}, member(user, groups)))
}

// chownAs calls shed_group chown of path in team as user.
func (e *env) chownAs(user, path, to string) reply {
	e.t.Helper()
	return e.post("shed_group_chown", map[string]any{"group": "team", "path": path, "new_owner": to}, member(user, "team"))
}

// memberIDs is the member ids of a shed_group info answer.
func memberIDs(t *testing.T, r reply) []string {
	t.Helper()
	var ids []string
	list, ok := r.Data["members"].([]any)
	if !ok {
		t.Fatalf("no member list: %s", r.raw)
	}
	for _, m := range list {
		ids = append(ids, m.(string))
	}
	return ids
}

// TestGroupInfoListsMembersSeen: shed_group info lists the members whose requests the
// server has seen, with name and last_seen, and says the list is not complete.
func TestGroupInfoListsMembersSeen(t *testing.T) {
	e := startLinks(t, nil)
	e.seen("alice", "team")
	e.seen("bob", "team,ops")
	e.seen("carol", "ops")
	r := e.post("shed_group_info", map[string]any{"group": "team"}, member("alice", "team"))
	wantOK(t, r)
	if ids := memberIDs(t, r); strings.Join(ids, ",") != "alice,bob" && strings.Join(ids, ",") != "bob,alice" {
		t.Fatalf("members: %s", r.raw)
	}
	if r.Data["member_count"] != 2.0 || r.Data["members_complete"] != false || r.Data["members_source"] != "seen" {
		t.Fatalf("member fields: %s", r.raw)
	}
	for _, d := range r.Data["member_details"].([]any) {
		m := d.(map[string]any)
		at, err := time.Parse(time.RFC3339, fmt.Sprint(m["last_seen"]))
		if m["name"] != "User "+fmt.Sprint(m["id"]) || err != nil || time.Since(at) > time.Minute {
			t.Fatalf("member detail: %v", m)
		}
	}
}

// TestGroupChownToSeenMember: the case in headers mode: alice hands plan.md to bob,
// a member the server has seen; carol, never seen in the group, is refused with a hint
// that names who is known.
func TestGroupChownToSeenMember(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.seen("bob", "team")
	e.seen("carol", "ops")
	wantOK(t, e.post("shed_create_file", inTeam(map[string]any{"path": "plan.md", "content": "x", "mode": "owner"}), member("alice", "team")))
	wantOK(t, e.post("shed_create_file", inTeam(map[string]any{"path": "b.md", "content": "x", "mode": "owner"}), member("alice", "team")))
	r := e.chownAs("alice", "plan.md", "bob")
	wantOK(t, r)
	if r.Data["new_owner"] != "bob" {
		t.Fatalf("chown: %s", r.raw)
	}
	r = e.chownAs("alice", "b.md", "carol")
	wantError(t, r, "INVALID_OWNER")
	if !strings.Contains(r.Hint, "alice") || !strings.Contains(r.Hint, "bob") || strings.Contains(r.Hint, "carol") {
		t.Fatalf("hint does not name the known members: %s", r.raw)
	}
}

// TestGroupChownRefusesMemberRemovedBetweenCalls: bob leaves the group between two chowns
// (his next request no longer lists it): the second is refused, and info no longer lists
// him.
func TestGroupChownRefusesMemberRemovedBetweenCalls(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.seen("bob", "team")
	for _, p := range []string{"a.md", "b.md"} {
		wantOK(t, e.post("shed_create_file", inTeam(map[string]any{"path": p, "content": "x", "mode": "owner"}), member("alice", "team")))
	}
	wantOK(t, e.chownAs("alice", "a.md", "bob"))
	e.seen("bob", "ops")
	wantError(t, e.chownAs("alice", "b.md", "bob"), "INVALID_OWNER")
	r := e.post("shed_group_info", map[string]any{"group": "team"}, member("alice", "team"))
	if ids := memberIDs(t, r); len(ids) != 1 || ids[0] != "alice" {
		t.Fatalf("a member who left is still listed: %s", r.raw)
	}
}

// TestGroupChownMemberSeenDays: a member last seen longer ago than groups.member_seen_days
// no longer counts.
func TestGroupChownMemberSeenDays(t *testing.T) {
	e := startLinks(t, map[string]string{"FILESHED_GROUPS_MEMBER_SEEN_DAYS": "45"})
	e.seen("bob", "team")
	wantOK(t, e.post("shed_create_file", inTeam(map[string]any{"path": "a.md", "content": "x", "mode": "owner"}), member("alice", "team")))
	age := func(days int) {
		t.Helper()
		db := stateDB(t, e) // the configured driver (FILESHED_TEST_STATE=postgres in CI's second run)
		at := time.Now().Add(-time.Duration(days) * 24 * time.Hour).UnixMicro()
		if _, err := db.Exec(`UPDATE group_members SET last_seen_us = $1 WHERE user_id = 'bob'`, at); err != nil {
			t.Fatal(err)
		}
	}
	age(50)
	wantError(t, e.chownAs("alice", "a.md", "bob"), "INVALID_OWNER")
	age(40)
	wantOK(t, e.chownAs("alice", "a.md", "bob"))
}

// TestGroupChownHostileOwners: ids that are not ids, or never seen, are INVALID_OWNER and
// change nothing.
func TestGroupChownHostileOwners(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.seen("bob", "team")
	wantOK(t, e.post("shed_create_file", inTeam(map[string]any{"path": "a.md", "content": "x", "mode": "owner"}), member("alice", "team")))
	for name, to := range map[string]string{"never seen": "zed", "control": "bo\nb", "nul": "bob\x00", "300 chars": strings.Repeat("b", 300),
		"dotdot": "../x", "slash": "team/bob", "blank": "  ", "option": "-rf", "look-alike": "bоb"} {
		t.Run(name, func(t *testing.T) {
			r := e.chownAs("alice", "a.md", to)
			wantError(t, r, "INVALID_OWNER")
			if strings.ContainsAny(r.Message, "\n\x00") || len(r.raw) > 2000 {
				t.Fatalf("answer echoes the id raw: %q", r.raw)
			}
		})
	}
	r := e.post("shed_group_info", map[string]any{"group": "team"}, member("alice", "team"))
	if !strings.Contains(r.raw, `"owner":"alice"`) {
		t.Fatalf("a refused chown changed the owner: %s", r.raw)
	}
	// Group ids that are not ids are never recorded (nor looked up).
	e.seen("mallory", "team,../x,"+strings.Repeat("g", 300)+",te%01am,a/b")
	db := stateDB(t, e)
	var odd int
	if err := db.QueryRow(`SELECT COUNT(*) FROM group_members WHERE group_id <> 'team'`).Scan(&odd); err != nil || odd != 0 {
		t.Fatalf("%d rows of groups that are not ids (%v)", odd, err)
	}
	// A group nobody else was seen in: the hint names the caller only.
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "group", "group": "solo", "path": "s.md", "content": "x"}, member("alice", "solo")))
	r = e.post("shed_group_chown", map[string]any{"group": "solo", "path": "s.md", "new_owner": "bob"}, member("alice", "solo"))
	wantError(t, r, "INVALID_OWNER")
	if !strings.Contains(r.Hint, "alice") {
		t.Fatalf("hint: %s", r.raw)
	}
}

// TestGroupLinkRefusedOnceCreatorLeft: alice's links to a group file and a group folder
// answer 410, with a page that says why, once a request of hers shows she left the group;
// shed_link list shows the same; a link to a group she is not in cannot be made.
func TestGroupLinkRefusedOnceCreatorLeft(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	wantOK(t, e.post("shed_create_file", inTeam(map[string]any{"path": "docs/plan.md", "content": "plan"}), member("alice", "team")))
	var urls []string
	for _, p := range []string{"docs/plan.md", "docs"} {
		r := e.post("shed_link_create", inTeam(map[string]any{"path": p}), member("alice", "team"))
		wantOK(t, r)
		urls = append(urls, r.Data["url"].(string))
	}
	for _, u := range urls {
		if g := e.get("GET", u, nil); g.status != 200 {
			t.Fatalf("member's link: %d", g.status)
		}
	}
	wantError(t, e.post("shed_link_create", inTeam(map[string]any{"path": "docs/plan.md"}), member("dave", "ops")), "GROUP_ACCESS_DENIED")
	e.seen("alice", "ops")
	for _, u := range urls {
		g := e.get("GET", u, nil)
		if g.status != http.StatusGone || !strings.Contains(g.body, "no longer a member") {
			t.Fatalf("link of a creator who left: %d %q", g.status, g.body)
		}
	}
	l := e.post("shed_link_list", nil, member("alice", "ops"))
	for _, x := range l.Data["links"].([]any) {
		if st := x.(map[string]any)["state"]; st != "creator_left" {
			t.Fatalf("list state %v for a link that answers 410: %s", st, l.raw)
		}
	}
}

// TestGroupMembersAbsentHeaderSaysNothing: a request without X-Shed-Groups (another client,
// a connection without the custom header) says nothing of the caller's groups: it marks
// nothing left. The header sent empty is "in no group".
func TestGroupMembersAbsentHeaderSaysNothing(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	wantOK(t, e.post("shed_create_file", inTeam(map[string]any{"path": "a.md", "content": "a"}), member("alice", "team")))
	url := e.post("shed_link_create", inTeam(map[string]any{"path": "a.md"}), member("alice", "team")).Data["url"].(string)
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, as("alice")))
	wantError(t, e.post("shed_group_info", map[string]any{"group": "team"}, as("alice")), "GROUP_NOT_AVAILABLE")
	if g := e.get("GET", url, nil); g.status != 200 {
		t.Fatalf("a request without the header marked the creator left: %d", g.status)
	}
	e.seen("alice", "")
	if g := e.get("GET", url, nil); g.status != http.StatusGone {
		t.Fatalf("the header sent empty: %d", g.status)
	}
}
