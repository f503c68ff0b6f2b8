package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An undo of a whole conversation is one step, all or nothing: when a change cannot be
// undone midway (its file is locked by another conversation's edit), the changes undone
// before it are put back, the error says nothing was undone, and the files are as they were.
func TestUndoConversationAllOrNothing(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	a, b := chat("chat-a"), chat("chat-b")
	for _, zone := range []string{"storage", "documents"} {
		wantOK(t, e.post("shed_create_file", map[string]any{"zone": zone, "path": "a.txt", "content": "a\n"}, a))
		wantOK(t, e.post("shed_create_file", map[string]any{"zone": zone, "path": "b.txt", "content": "b\n"}, a))
		wantOK(t, e.post("shed_create_file", map[string]any{"zone": zone, "path": "b.txt", "content": "b2\n", "overwrite": true}, a))
	}
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "a.txt"}, b)) // the oldest change's file
	r := e.post("shed_version", map[string]any{"action": "undo", "conversation": "this"}, a)
	wantError(t, r, "FILE_LOCKED")
	if n, ok := r.Details["undone"]; !ok || n != float64(0) || !strings.Contains(r.Hint, "Nothing was undone") {
		t.Fatalf("the refusal does not say nothing was undone: %v %s", r.Details, r.Hint)
	}
	for _, zone := range []string{"Storage", "Documents"} {
		for p, want := range map[string]string{"a.txt": "a\n", "b.txt": "b2\n"} {
			if got, _ := os.ReadFile(filepath.Join(e.base, "users/local", zone, "data", p)); string(got) != want {
				t.Fatalf("%s/%s after a refused undo: %q, want %q", zone, p, got, want)
			}
		}
	}
	wantOK(t, e.post("shed_lockedit_cancel", map[string]any{"zone": "storage", "path": "a.txt"}, b))
	wantOK(t, e.post("shed_version", map[string]any{"action": "undo", "conversation": "this"}, a))
	for _, zone := range []string{"Storage", "Documents"} {
		for _, p := range []string{"a.txt", "b.txt"} {
			if fileExists(filepath.Join(e.base, "users/local", zone, "data", p)) {
				t.Fatalf("%s/%s stayed after the whole conversation was undone", zone, p)
			}
		}
	}
}
