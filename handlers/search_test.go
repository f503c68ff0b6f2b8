package handlers_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// found lists the matches of a shed_search answer in order: "zone[/group]:path:line" for a
// line ("page.line" in a PDF), "zone[/group]:path:name" for a matching name.
func found(t *testing.T, r reply) []string {
	t.Helper()
	wantOK(t, r)
	var out []string
	files, _ := r.Data["files"].([]any)
	for _, x := range files {
		f := x.(map[string]any)
		where := f["zone"].(string)
		if g, ok := f["group"].(string); ok {
			where += "/" + g
		}
		where += ":" + f["path"].(string)
		if f["name"] == true {
			out = append(out, where+":name")
		}
		lines, _ := f["lines"].([]any)
		for _, y := range lines {
			l := y.(map[string]any)
			at := fmt.Sprint(l["line"])
			if p, ok := l["page"]; ok {
				at = fmt.Sprint(p) + "." + at
			}
			out = append(out, where+":"+at)
		}
	}
	if n := int(r.Data["matches"].(float64)); n != len(out) {
		t.Fatalf("matches = %d, %d listed: %s", n, len(out), r.raw)
	}
	return out
}

// wantFound fails unless the answer's matches are want, in order.
func wantFound(t *testing.T, r reply, want ...string) {
	t.Helper()
	if got := found(t, r); !slices.Equal(got, want) {
		t.Fatalf("found %q\nwant  %q\n%s", got, want, r.raw)
	}
}

// TestSearchEveryZone: without zone, a search covers Uploads of this conversation,
// Storage, Documents and each group the caller is a member of, in that order, each zone in
// path order; zone (and group) narrow it; zone='group' alone is every group. Another
// conversation's uploads, another user's zones and a group the caller is not in are never
// searched nor named.
func TestSearchEveryZone(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Uploads/c-alice/up.txt", "needle in an upload\n")
	e.write("users/alice/Uploads/c-other/other.txt", "needle of another chat\n")
	e.write("users/alice/Storage/data/b/deep.txt", "x\nneedle deep\n")
	e.write("users/alice/Storage/data/a.txt", "NeEdLe first\nnone\nneedle third\n")
	e.write("users/alice/Documents/data/doc.md", "a needle in documents\n")
	e.write("users/bob/Storage/data/bob.txt", "needle of bob\n")
	e.write("groups/team/data/plan.md", "team needle\n")
	e.write("groups/ops/data/ops.md", "ops needle\n")
	e.write("groups/zeta/data/z.md", "needle of a group alice is not in\n")
	alice := member("alice", "team,ops")
	all := []string{"uploads:up.txt:1", "storage:a.txt:1", "storage:a.txt:3", "storage:b/deep.txt:2",
		"documents:doc.md:1", "group/ops:ops.md:1", "group/team:plan.md:1"}
	r := e.post("shed_search", map[string]any{"query": "needle"}, alice)
	wantFound(t, r, all...)
	if z := fmt.Sprint(r.Data["zones"]); z != "[Uploads Storage Documents Group:ops Group:team]" {
		t.Fatalf("zones searched: %s", z)
	}
	if strings.Contains(r.raw, "bob") || strings.Contains(r.raw, "zeta") || strings.Contains(r.raw, "other") {
		t.Fatalf("another user's, conversation's or group's file was named: %s", r.raw)
	}
	for _, c := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"zone": "storage"}, all[1:4]},
		{map[string]any{"zone": "Documents"}, all[4:5]},
		{map[string]any{"zone": "uploads"}, all[:1]},
		{map[string]any{"zone": "group"}, all[5:]},
		{map[string]any{"group": "team"}, all[6:]},
		{map[string]any{"zone": "group", "group": "ops"}, all[5:6]},
		{map[string]any{"case_sensitive": true, "zone": "storage"}, []string{"storage:a.txt:3", "storage:b/deep.txt:2"}},
		{map[string]any{"path": "b"}, all[3:4]},
		{map[string]any{"path": "*.md"}, []string{"documents:doc.md:1", "group/ops:ops.md:1", "group/team:plan.md:1"}},
		{map[string]any{"path": "b/*.txt", "zone": "storage"}, all[3:4]},
		{map[string]any{"path": "**/deep.txt"}, all[3:4]},
		{map[string]any{"query": "^needle", "regex": true}, []string{"uploads:up.txt:1", "storage:a.txt:1", "storage:a.txt:3", "storage:b/deep.txt:2"}},
		{map[string]any{"query": "deep", "names_only": true}, []string{"storage:b/deep.txt:name"}},
		{map[string]any{"query": "deep"}, []string{"storage:b/deep.txt:name", "storage:b/deep.txt:2"}},
		{map[string]any{"query": "^b$", "regex": true, "names_only": true}, []string{"storage:b/:name"}},
	} {
		args := map[string]any{"query": "needle"}
		for k, v := range c.args {
			args[k] = v
		}
		wantFound(t, e.post("shed_search", args, alice), c.want...)
	}
	// In no group, zone='group' searches nothing, and says so.
	r = e.post("shed_search", map[string]any{"query": "needle", "zone": "group"}, member("alice", ""))
	if wantFound(t, r); fmt.Sprint(r.Data["zones"]) != "[]" || !strings.Contains(r.Message, "no group") {
		t.Fatalf("in no group: %s", r.raw)
	}
	// A group the caller is not in is refused by name, as every tool refuses it.
	r = e.post("shed_search", map[string]any{"query": "needle", "group": "zeta"}, alice)
	if r.Success {
		t.Fatalf("a search of another group: %s", r.raw)
	}
}

// TestSearchGroupLeft: once a request of alice's no longer lists team (she left it), her
// searches no longer cover it, and naming it is refused.
func TestSearchGroupLeft(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("groups/team/data/plan.md", "team needle\n")
	wantFound(t, e.post("shed_search", map[string]any{"query": "needle"}, member("alice", "team")), "group/team:plan.md:1")
	left := member("alice", "ops")
	wantFound(t, e.post("shed_search", map[string]any{"query": "needle"}, left))
	r := e.post("shed_search", map[string]any{"query": "needle", "zone": "group", "group": "team"}, left)
	if r.Success || strings.Contains(r.raw, "plan.md") {
		t.Fatalf("a group left is still searched: %s", r.raw)
	}
}

// TestSearchOwnerModes: the ownership modes restrict writes, not reads (every member reads
// every file of the group, as shed_read does): bob's search finds alice's files in every
// mode, exactly those shed_read lets him read.
func TestSearchOwnerModes(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	for _, mode := range []string{"owner", "owner_ro", "group"} {
		g.create("alice", mode+".md", "alice's needle ("+mode+")\n", mode)
	}
	r := g.as("bob", "shed_search", in(map[string]any{"query": "needle"}))
	wantFound(t, r, "group/team:group.md:1", "group/team:owner.md:1", "group/team:owner_ro.md:1")
	for _, mode := range []string{"owner", "owner_ro", "group"} {
		wantOK(t, g.as("bob", "shed_read", in(map[string]any{"path": mode + ".md"})))
	}
	// dave is in ops only: team is not his, by default nor by name.
	wantFound(t, g.as("dave", "shed_search", map[string]any{"query": "needle"}))
	if r := g.as("dave", "shed_search", in(map[string]any{"query": "needle"})); r.Success {
		t.Fatalf("a non-member searched the group: %s", r.raw)
	}
}

// TestSearchPagingMatchesGrep: paging with a small answer budget neither repeats nor skips
// a match: the pages, taken one after the other with offset=next_offset, hold exactly the
// lines grep finds in the same files, each once, in order; the last page has no
// next_offset.
func TestSearchPagingMatchesGrep(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_MAX_OUTPUT_DEFAULT": "700"})
	for i := range 40 {
		var b strings.Builder
		for l := range 30 + i {
			switch {
			case (l+i)%7 == 0:
				fmt.Fprintf(&b, "line %d of file %d holds the Needle\n", l, i)
			case (l*i)%11 == 3:
				fmt.Fprintf(&b, "needle needle twice on one line %d\n", l)
			default:
				fmt.Fprintf(&b, "nothing on line %d\n", l)
			}
		}
		e.write(fmt.Sprintf("%sd%d/f%02d.txt", zoneDir, i%3, i), b.String())
	}
	out, err := exec.Command("grep", "-rniF", "needle", filepath.Join(e.base, zoneDir)).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(strings.TrimPrefix(l, filepath.Join(e.base, zoneDir)+"/"), ":", 3)
		want = append(want, "storage:"+parts[0]+":"+parts[1])
	}
	var got []string
	offset, pages := 0, 0
	for {
		r := e.post("shed_search", map[string]any{"query": "needle", "zone": "storage", "offset": offset}, nil)
		page := found(t, r)
		got = append(got, page...)
		pages++
		next, ok := r.Data["next_offset"].(float64)
		if !ok {
			if r.Data["truncated"] != false {
				t.Fatalf("last page truncated: %s", r.raw)
			}
			break
		}
		if len(page) == 0 || int(next) != offset+len(page) || r.Data["truncated"] != true || len(r.raw) > 1500 {
			t.Fatalf("page at %d: next_offset %v after %d matches (%d bytes): %s", offset, next, len(page), len(r.raw), r.raw)
		}
		offset = int(next)
	}
	if pages < 5 {
		t.Fatalf("%d pages: the budget did not page", pages)
	}
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	slices.Sort(want)
	if !slices.Equal(sorted, want) || len(slices.Compact(slices.Clone(sorted))) != len(got) {
		t.Fatalf("pages found %d matches, grep %d:\n%q\n%q", len(got), len(want), got, want)
	}
	// Beyond the end: no match, no next_offset.
	r := e.post("shed_search", map[string]any{"query": "needle", "zone": "storage", "offset": len(want) + 5}, nil)
	if wantFound(t, r); r.Data["next_offset"] != nil {
		t.Fatalf("past the end: %s", r.raw)
	}
}
