package handlers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A command in an encrypted Storage runs in a decrypted copy and reaches the zone when the
// copy is carried back: its changes are journaled there, path by path, and — the zone's
// files being still as they were when the write-back starts — with sealed before-images, so
// what it modified or removed comes back on undo and what it created goes. No plaintext
// of the images is on disk, in the journal area or in the state database.
func TestEncryptedCommandChangesUndone(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	a := chat("chat-a")
	secret := "the secret plan: attack at dawn\n"
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "keep.txt", "content": secret}, a))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "gone.txt", "content": secret}, a))
	for _, args := range [][]string{{"sed", "-i", "s/dawn/dusk/", "keep.txt"}, {"rm", "gone.txt"}, {"mkdir", "-p", "new/deep"}} {
		wantOK(t, e.post("shed_exec", map[string]any{"zone": "storage", "cmd": args[0], "args": args[1:]}, a))
	}
	list := e.post("shed_version", map[string]any{"action": "changes", "zone": "storage", "limit": 3}, a)
	wantOK(t, list)
	var got []string
	for _, c := range list.Data["changes"].([]any) {
		m := c.(map[string]any)
		got = append(got, fmt.Sprintf("%s %s %s %v", m["tool"], m["op"], m["path"], m["undoable"]))
	}
	want := "shed_exec create new true,shed_exec delete gone.txt true,shed_exec write keep.txt true"
	if strings.Join(got, ",") != want {
		t.Fatalf("the commands' changes in an encrypted Storage: %v", got)
	}
	_ = filepath.Walk(filepath.Join(e.base, "users/local/journal"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "attack") {
				t.Errorf("a before-image in plaintext: %s", p)
			}
		}
		return err
	})
	noPlaintextInState(t, e, "attack") // the small files' images are in their rows
	for _, c := range list.Data["changes"].([]any) {
		wantOK(t, e.post("shed_version", map[string]any{"action": "undo", "change_id": c.(map[string]any)["id"]}, a))
	}
	if fileExists(filepath.Join(e.base, "users/local/Storage/data/new")) {
		t.Fatal("the created folder stayed")
	}
	for _, p := range []string{"keep.txt", "gone.txt"} {
		r := e.post("shed_read", map[string]any{"zone": "storage", "path": p}, a)
		wantOK(t, r)
		if !strings.Contains(r.raw, "attack at dawn") {
			t.Fatalf("%s after the undo: %s", p, r.raw)
		}
		e.sealedOnDisk("users/local/Storage/data/"+p, secret)
	}
}

// Each change names the tool the model called, whatever label its commit carries: a file
// created, patched, renamed and deleted are four tools, not "Patch", "Rename" and "Delete".
func TestChangesNameTheToolCalled(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	a := chat("chat-tools")
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "a.txt", "content": "one\n"}, a))
	wantOK(t, e.post("shed_patch_text", map[string]any{"zone": "documents", "path": "a.txt", "content": "two\n", "position": "end"}, a))
	wantOK(t, e.post("shed_rename", map[string]any{"zone": "documents", "old_path": "a.txt", "new_path": "b.txt"}, a))
	wantOK(t, e.post("shed_delete", map[string]any{"zone": "documents", "path": "b.txt"}, a))
	list := e.post("shed_version", map[string]any{"action": "changes", "zone": "documents"}, a)
	wantOK(t, list)
	var got []string
	for _, c := range list.Data["changes"].([]any) {
		got = append(got, fmt.Sprint(c.(map[string]any)["tool"]))
	}
	if want := "shed_delete,shed_rename,shed_patch_text,shed_create_file"; strings.Join(got, ",") != want {
		t.Fatalf("the tools of the changes: %v, want %s", got, want)
	}
}
