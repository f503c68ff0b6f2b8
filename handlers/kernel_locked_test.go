package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/archive/ziptest"
)

// lockedWriter is one way of changing a file another conversation holds in a locked edit:
// the call (made from conversation "b"), and the zone-relative files it would change.
type lockedWriter struct {
	name  string
	zone  string            // where the held file is: storage or documents
	held  string            // the held file
	empty bool              // the held file is empty (an empty file is an empty SQLite database)
	setup map[string]string // other files of the zone (zone-relative -> content)
	tool  string
	args  map[string]any
}

// TestEveryWriterRefusesAFileHeldByAnotherConversation (issue 23): a file conversation "a"
// holds in a locked edit is changed by no tool of conversation "b": each answers
// FILE_LOCKED, the file and the recorded usage stay as they were. shed_sqlite and the
// to_group bridge wrote under the lock before the write transaction.
func TestEveryWriterRefusesAFileHeldByAnotherConversation(t *testing.T) {
	t.Parallel()
	csv := "name,n\nx,1\n"
	cases := []lockedWriter{
		{name: "create_file", zone: "storage", held: "h.txt", tool: "shed_create_file",
			args: map[string]any{"path": "h.txt", "content": "new"}},
		{name: "patch_text", zone: "documents", held: "h.txt", tool: "shed_patch_text",
			args: map[string]any{"path": "h.txt", "content": "more"}},
		{name: "patch_bytes", zone: "storage", held: "h.txt", tool: "shed_patch_bytes",
			args: map[string]any{"path": "h.txt", "content": "41"}},
		{name: "convert_eol", zone: "storage", held: "h.txt", tool: "shed_convert_eol",
			args: map[string]any{"path": "h.txt", "to": "dos"}},
		{name: "delete", zone: "documents", held: "h.txt", tool: "shed_delete",
			args: map[string]any{"path": "h.txt"}},
		{name: "delete folder", zone: "storage", held: "d/h.txt", tool: "shed_delete",
			args: map[string]any{"path": "d"}},
		{name: "rename source", zone: "storage", held: "h.txt", tool: "shed_rename",
			args: map[string]any{"old_path": "h.txt", "new_path": "g.txt"}},
		{name: "rename folder source", zone: "documents", held: "d/h.txt", tool: "shed_rename",
			args: map[string]any{"old_path": "d", "new_path": "e"}},
		{name: "rename destination", zone: "storage", held: "h.txt", setup: map[string]string{"o.txt": "other"},
			tool: "shed_rename", args: map[string]any{"old_path": "o.txt", "new_path": "h.txt", "overwrite": true}},
		{name: "unzip over it", zone: "storage", held: "x/h.txt", setup: map[string]string{"x/h.txt.keep": ""},
			tool: "shed_unzip", args: map[string]any{"src": "a.zip", "dest": "x", "overwrite": true}},
		{name: "sqlite insert", zone: "storage", held: "k.db", empty: true, tool: "shed_sqlite",
			args: map[string]any{"path": "k.db", "query": "CREATE TABLE t(x)"}},
		{name: "sqlite import_csv", zone: "documents", held: "k.db", empty: true, setup: map[string]string{"in.csv": csv},
			tool: "shed_sqlite", args: map[string]any{"path": "k.db", "import_csv": "in.csv", "table": "t"}},
		{name: "sqlite output_csv", zone: "storage", held: "out.csv", setup: map[string]string{"in.csv": csv},
			tool: "shed_sqlite", args: map[string]any{"path": "q.db", "query": "SELECT 1 AS one", "output_csv": "out.csv"}},
		{name: "restore", zone: "documents", held: "h.txt", tool: "shed_restore",
			args: map[string]any{"path": "h.txt", "version": "HEAD"}},
		{name: "save_page", zone: "storage", held: "output/p.md", tool: "shed_save_page",
			args: map[string]any{"title": "P", "content": "x", "path": "output/p.md"}},
		{name: "storage_to_documents over it", zone: "documents", held: "h.txt", setup: map[string]string{"../../Storage/data/s.txt": "s"},
			tool: "shed_copy_storage_to_documents", args: map[string]any{"src": "s.txt", "dest": "h.txt", "overwrite": true}},
		{name: "documents_to_storage of it", zone: "documents", held: "h.txt",
			tool: "shed_move_documents_to_storage", args: map[string]any{"src": "h.txt", "dest": "h.txt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, nil)
			zoneDir := map[string]string{"storage": "users/local/Storage/data/", "documents": "users/local/Documents/data/"}[tc.zone]
			for p, content := range tc.setup {
				e.write(filepath.Join(zoneDir, p), content)
			}
			if tc.name == "unzip over it" {
				e.zipAt(filepath.Join(zoneDir, "a.zip"), zipOf(ziptest.Entry{Name: "h.txt", Body: "from the zip"}))
			}
			// The held file goes through a tool, so that Documents commits it and the usage counts it.
			content := "held"
			if tc.empty {
				content = ""
			}
			wantOK(t, e.post("shed_create_file", map[string]any{"zone": tc.zone, "path": tc.held, "content": content}, conv("a")))
			wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": tc.zone, "path": tc.held}, conv("a")))
			before := usage(t, e, "local")
			args := map[string]any{"zone": tc.zone}
			for k, v := range tc.args {
				args[k] = v
			}
			wantError(t, e.post(tc.tool, args, conv("b")), "FILE_LOCKED")
			if got := readFile(t, e, filepath.Join(zoneDir, tc.held)); got != content {
				t.Fatalf("the held file changed: %q", got)
			}
			if after := usage(t, e, "local"); after != before {
				t.Fatalf("usage %d -> %d", before, after)
			}
			// The holder saves: the lock protected her work, not the file forever.
			wantOK(t, e.post("shed_lockedit_save", map[string]any{"zone": tc.zone, "path": tc.held}, conv("a")))
		})
	}
}

// TestToGroupRefusesAFileHeldByAnotherConversation (issue 23): chat A of alice holds the group
// file plan.md; bob's shed_transfer to_group with overwrite replaced it.
func TestToGroupRefusesAFileHeldByAnotherConversation(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.create("alice", "plan.md", "alice's plan\n", "group")
	wantOK(t, g.as("alice", "shed_lockedit_open", in(map[string]any{"path": "plan.md"})))
	wantOK(t, g.as("bob", "shed_create_file", map[string]any{"zone": "storage", "path": "new.md", "content": "bob's\n"}))
	wantError(t, g.as("bob", "shed_copy_to_group", map[string]any{"src_zone": "storage", "src_path": "new.md",
		"group": "team", "dest_path": "plan.md", "overwrite": true}), "FILE_LOCKED")
	g.wantFile("plan.md", "alice's plan\n")
	// The same from another conversation of alice herself.
	r := g.post("shed_copy_to_group", map[string]any{"src_zone": "storage", "src_path": "new.md", "group": "team",
		"dest_path": "plan.md", "overwrite": true}, map[string]string{"Authorization": "Bearer " + key,
		"X-OpenWebUI-User-Id": "bob", "X-OpenWebUI-Chat-Id": "c-other"})
	wantError(t, r, "FILE_LOCKED")
	g.wantFile("plan.md", "alice's plan\n")
}

// TestLockeditOpenOfABinaryFile (issue 23): raw bytes with \u0000 in a JSON string are no
// answer for a model: BINARY_FILE with a hint to shed_read_bytes, and no lock is left.
func TestLockeditOpenOfABinaryFile(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	p := e.write("users/local/Storage/data/b.bin", "\x00\x01\x02binary\xff")
	r := e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "b.bin"}, conv("a"))
	wantError(t, r, "BINARY_FILE")
	if !strings.Contains(r.Hint, "shed_read_bytes") {
		t.Fatalf("hint: %s", r.raw)
	}
	wantOK(t, e.post("shed_patch_bytes", map[string]any{"zone": "storage", "path": "b.bin", "content": "41"}, conv("b")))
	if b, _ := os.ReadFile(p); string(b[len(b)-1:]) != "A" {
		t.Fatalf("no lock must be left behind: %q", b)
	}
}
