package handlers_test

import (
	"fmt"
	"testing"

	"github.com/fileshed/fileshed/core/archive/ziptest"
)

// groupWriter is one way of changing a group file f; the call is made with the file's path.
type groupWriter struct {
	name string
	// del: the call deletes or moves the file away (PERMISSION_DENIED with the mode's reason,
	// as the original answers shed_delete and shed_rename), else it writes it.
	del  bool
	call func(g *groupEnv, user, f string) reply
}

// groupWriters are every tool that changes an existing group file.
var groupWriters = []groupWriter{
	{"create_file", false, func(g *groupEnv, u, f string) reply {
		return g.as(u, "shed_create_file", in(map[string]any{"path": f, "content": "new"}))
	}},
	{"patch_text", false, func(g *groupEnv, u, f string) reply {
		return g.as(u, "shed_patch_text", in(map[string]any{"path": f, "content": "more"}))
	}},
	{"patch_bytes", false, func(g *groupEnv, u, f string) reply {
		return g.as(u, "shed_patch_bytes", in(map[string]any{"path": f, "content": "41"}))
	}},
	{"convert_eol", false, func(g *groupEnv, u, f string) reply {
		return g.as(u, "shed_convert_eol", in(map[string]any{"path": f, "to": "dos"}))
	}},
	{"restore", false, func(g *groupEnv, u, f string) reply {
		return g.as(u, "shed_restore", in(map[string]any{"path": f, "version": "HEAD"}))
	}},
	{"save_page", false, func(g *groupEnv, u, f string) reply {
		return g.as(u, "shed_save_page", in(map[string]any{"title": "t", "content": "x", "path": f + ".md"}))
	}},
	{"rename destination", false, func(g *groupEnv, u, f string) reply {
		g.create(u, f+".src", "src", "group")
		return g.as(u, "shed_rename", in(map[string]any{"old_path": f + ".src", "new_path": f, "overwrite": true}))
	}},
	{"to_group destination", false, func(g *groupEnv, u, f string) reply {
		wantOK(g.t, g.as(u, "shed_create_file", map[string]any{"zone": "storage", "path": "s.txt", "content": "s"}))
		return g.as(u, "shed_copy_to_group", map[string]any{"src_zone": "storage", "src_path": "s.txt", "group": "team",
			"dest_path": f, "overwrite": true})
	}},
	{"unzip over it", false, func(g *groupEnv, u, f string) reply {
		g.zipAt("users/"+u+"/Storage/data/a.zip", zipOf(ziptest.Entry{Name: f, Body: "zipped"}))
		return g.as(u, "shed_unzip", in(map[string]any{"src": "a.zip", "src_zone": "storage", "dest": ".", "overwrite": true}))
	}},
	{"lockedit_open", false, func(g *groupEnv, u, f string) reply {
		r := g.as(u, "shed_lockedit_open", in(map[string]any{"path": f}))
		if r.Success {
			wantOK(g.t, g.as(u, "shed_lockedit_cancel", in(map[string]any{"path": f})))
		}
		return r
	}},
	{"delete", true, func(g *groupEnv, u, f string) reply {
		return g.as(u, "shed_delete", in(map[string]any{"path": f}))
	}},
	{"rename source", true, func(g *groupEnv, u, f string) reply {
		return g.as(u, "shed_rename", in(map[string]any{"old_path": f, "new_path": f + ".moved"}))
	}},
}

// TestGroupModesHoldOnEveryWriter (issue 23): owner — only the owner writes, moves or
// deletes; group — every member; owner_ro — nobody, not even the owner (reference §2.10:
// the owner changes the mode first). The owner deleted an owner_ro file directly before.
func TestGroupModesHoldOnEveryWriter(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	n := 0
	for _, w := range groupWriters {
		for _, c := range []struct {
			mode, user string
			ok         bool
			code       string // write refusal; deletes answer PERMISSION_DENIED with this reason
		}{
			{"owner", "alice", true, ""},
			{"owner", "bob", false, "FILE_OWNER_ONLY"},
			{"group", "bob", true, ""},
			{"owner_ro", "bob", false, "FILE_READ_ONLY"},
			{"owner_ro", "alice", false, "FILE_READ_ONLY"},
		} {
			n++
			f := fmt.Sprintf("f%d.txt", n)
			t.Run(fmt.Sprintf("%s/%s/%s", w.name, c.mode, c.user), func(t *testing.T) {
				g.t = t
				g.create("alice", f, "v1\n", c.mode)
				if w.name == "save_page" {
					g.create("alice", f+".md", "v1\n", c.mode)
				}
				r := w.call(g, c.user, f)
				if c.ok {
					wantOK(t, r)
					return
				}
				if w.del {
					wantError(t, r, "PERMISSION_DENIED")
					if r.Details["reason"] != c.code {
						t.Fatalf("reason: %s", r.raw)
					}
				} else {
					wantError(t, r, c.code)
				}
				if w.name == "save_page" {
					g.wantFile(f+".md", "v1\n")
				} else {
					g.wantFile(f, "v1\n")
				}
			})
		}
	}
	// The owner of an owner_ro file changes its mode back, then deletes it.
	g.create("alice", "pub.md", "published\n", "owner_ro")
	wantOK(t, g.as("alice", "shed_group_set_mode", map[string]any{"group": "team", "path": "pub.md", "mode": "owner"}))
	wantOK(t, g.as("alice", "shed_delete", in(map[string]any{"path": "pub.md"})))
}
