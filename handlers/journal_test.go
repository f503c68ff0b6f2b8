package handlers_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/store"
)

// chat is the headers of conversation id.
func chat(id string) map[string]string { return map[string]string{"X-OpenWebUI-Chat-Id": id} }

// changeIDs are the ids of a changes answer, newest first.
func changeIDs(t *testing.T, r reply) []int64 {
	t.Helper()
	wantOK(t, r)
	var ids []int64
	for _, c := range r.Data["changes"].([]any) {
		ids = append(ids, int64(c.(map[string]any)["id"].(float64)))
	}
	return ids
}

// A conversation's changes through shed_version: listed newest first with lines, its diff
// shown, an overwritten Storage file put back by undo, a deleted one brought back, the undo
// undone (redo); another conversation's change is "by other" and listed only with
// conversation='all'.
func TestJournalThroughShedVersion(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	a := chat("chat-a")
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "notes.md", "content": "one\ntwo\n"}, a))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "notes.md", "content": "one\n2\nthree\n", "overwrite": true}, a))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "other.md", "content": "b\n"}, chat("chat-b")))
	r := e.post("shed_version", map[string]any{"action": "changes"}, a)
	ids := changeIDs(t, r)
	if len(ids) != 2 {
		t.Fatalf("this conversation's changes: %s", r.raw)
	}
	w := r.Data["changes"].([]any)[0].(map[string]any)
	if w["op"] != "write" || w["lines_added"] != 2.0 || w["lines_removed"] != 1.0 || w["by"] != "this" || w["undoable"] != true {
		t.Fatalf("the overwrite: %v", w)
	}
	all := e.post("shed_version", map[string]any{"action": "changes", "conversation": "all"}, a)
	if got := changeIDs(t, all); len(got) != 3 || all.Data["changes"].([]any)[0].(map[string]any)["by"] != "other" {
		t.Fatalf("every conversation: %s", all.raw)
	}
	d := e.post("shed_version", map[string]any{"action": "changes", "change_id": ids[0]}, a)
	wantOK(t, d)
	if diff, _ := d.Data["diff"].(string); !strings.Contains(diff, "-two\n+2\n+three\n") {
		t.Fatalf("diff: %s", d.raw)
	}
	wantOK(t, e.post("shed_delete", map[string]any{"zone": "storage", "path": "notes.md"}, a))
	file := filepath.Join(e.base, "users/local/Storage/data/notes.md")
	latest := changeIDs(t, e.post("shed_version", map[string]any{"action": "changes", "limit": 1}, a))
	wantOK(t, e.post("shed_version", map[string]any{"action": "undo", "change_id": latest[0]}, a))
	if b, err := os.ReadFile(file); err != nil || string(b) != "one\n2\nthree\n" {
		t.Fatalf("after undoing the delete: %q, %v", b, err)
	}
	wantOK(t, e.post("shed_version", map[string]any{"action": "undo", "change_id": ids[0]}, a))
	if b, _ := os.ReadFile(file); string(b) != "one\ntwo\n" {
		t.Fatalf("after undoing the overwrite: %q", b)
	}
	redo := changeIDs(t, e.post("shed_version", map[string]any{"action": "changes", "limit": 1}, a))
	wantOK(t, e.post("shed_version", map[string]any{"action": "undo", "change_id": redo[0]}, a))
	if b, _ := os.ReadFile(file); string(b) != "one\n2\nthree\n" {
		t.Fatalf("after the redo: %q", b)
	}
	// Hostile ids: another user's, none, an absurd one.
	for _, id := range []any{999999, -1, "x"} {
		if r := e.post("shed_version", map[string]any{"action": "undo", "change_id": id}, a); r.Success {
			t.Errorf("undo of change %v: %s", id, r.raw)
		}
	}
	wantError(t, e.post("shed_version", map[string]any{"action": "changes", "conversation": "../x"}, a), "INVALID_PARAMETER")
	wantError(t, e.post("shed_version", map[string]any{"action": "undo"}, a), "MISSING_PARAMETER")
}

// Another conversation changed the file since: the undo is refused with UNDO_CONFLICT
// naming that change, the file untouched; force puts the old content back over it.
func TestUndoConflictRefusedThenForced(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	a, b := chat("chat-a"), chat("chat-b")
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "plan.md", "content": "v1\n"}, a))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "plan.md", "content": "v2\n", "overwrite": true}, a))
	mine := changeIDs(t, e.post("shed_version", map[string]any{"action": "changes"}, a))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "plan.md", "content": "v3 by b\n", "overwrite": true}, b))
	theirs := changeIDs(t, e.post("shed_version", map[string]any{"action": "changes"}, b))
	r := e.post("shed_version", map[string]any{"action": "undo", "change_id": mine[0]}, a)
	wantError(t, r, "UNDO_CONFLICT")
	later, _ := r.Details["later"].([]any)
	if len(later) != 1 || later[0].(map[string]any)["id"] != float64(theirs[0]) || later[0].(map[string]any)["by"] != "other" {
		t.Fatalf("conflict: %s", r.raw)
	}
	file := filepath.Join(e.base, "users/local/Documents/data/plan.md")
	if got, _ := os.ReadFile(file); string(got) != "v3 by b\n" {
		t.Fatalf("a refused undo changed the file: %q", got)
	}
	r = e.post("shed_version", map[string]any{"action": "undo", "conversation": "this", "force": true}, a)
	wantOK(t, r)
	if got, _ := os.ReadFile(file); string(got) != "" && fileExists(file) {
		t.Fatalf("after the forced undo of the whole conversation: %q", got)
	}
	if r.Data["count"] != 2.0 {
		t.Fatalf("undone: %s", r.raw)
	}
	h := e.post("shed_version", map[string]any{"action": "history", "zone": "documents", "path": "plan.md"}, nil)
	wantOK(t, h)
	if h.Data["count"].(float64) < 4 {
		t.Fatalf("the undo made no commits: %s", h.raw)
	}
}

// fileExists reports whether p exists.
func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// A command's changes are journaled path by path and undone: in Documents a modified or
// removed file comes back from the commit's parent and a created folder goes; in Storage
// what a command created goes, what it modified or removed says undoable=false.
func TestCommandChangesUndone(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	a := chat("chat-a")
	for _, zone := range []string{"documents", "storage"} {
		wantOK(t, e.post("shed_create_file", map[string]any{"zone": zone, "path": "keep.txt", "content": "kept\n"}, a))
		wantOK(t, e.post("shed_create_file", map[string]any{"zone": zone, "path": "gone.txt", "content": "gone\n"}, a))
		for _, args := range [][]string{{"sed", "-i", "s/kept/changed/", "keep.txt"}, {"rm", "gone.txt"}, {"mkdir", "-p", "new/deep"}} {
			wantOK(t, e.post("shed_exec", map[string]any{"zone": zone, "cmd": args[0], "args": args[1:]}, a))
		}
		list := e.post("shed_version", map[string]any{"action": "changes", "zone": zone, "limit": 3}, a)
		wantOK(t, list)
		var got []string
		for _, c := range list.Data["changes"].([]any) {
			m := c.(map[string]any)
			got = append(got, fmt.Sprintf("%s %s %s %v", m["tool"], m["op"], m["path"], m["undoable"]))
		}
		want := []string{"shed_exec create new true", "shed_exec delete gone.txt true", "shed_exec write keep.txt true"}
		if zone == "storage" {
			want[1], want[2] = "shed_exec delete gone.txt false", "shed_exec write keep.txt false"
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: the commands' changes: %v", zone, got)
		}
		data := filepath.Join(e.base, "users/local", map[string]string{"documents": "Documents", "storage": "Storage"}[zone], "data")
		for i, c := range list.Data["changes"].([]any) {
			r := e.post("shed_version", map[string]any{"action": "undo", "change_id": c.(map[string]any)["id"]}, a)
			if zone == "storage" && i > 0 {
				wantError(t, r, "INVALID_PARAMETER")
				continue
			}
			wantOK(t, r)
		}
		if fileExists(filepath.Join(data, "new")) {
			t.Fatalf("%s: the created folder stayed", zone)
		}
		if zone == "documents" {
			for p, content := range map[string]string{"gone.txt": "gone\n", "keep.txt": "kept\n"} {
				if b, _ := os.ReadFile(filepath.Join(data, p)); string(b) != content {
					t.Fatalf("%s did not come back: %q", p, b)
				}
			}
		}
	}
}

// In an encrypted Storage the before-images are encrypted too: no byte of the overwritten
// or removed content is on disk in the journal area or in the state database (a small
// file's image is held by its row), no image is named by its content, and the undo brings
// the plaintext back.
func TestJournalImagesEncrypted(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	secret := "the secret plan: " + strings.Repeat("attack at dawn ", 20)
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "plan.md", "content": secret}, nil))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "plan.md", "content": "nothing\n", "overwrite": true}, nil))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "d/x.md", "content": secret}, nil))
	wantOK(t, e.post("shed_delete", map[string]any{"zone": "storage", "path": "d"}, nil))
	area := filepath.Join(e.base, "users/local/journal")
	objects := 0
	_ = filepath.Walk(area, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		objects++
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), "attack") || strings.Contains(string(b), "x.md") || !strings.HasPrefix(string(b), string(sealedMagic)) {
			t.Errorf("a before-image in plaintext: %s", p)
		}
		return nil
	})
	if objects < 2 { // the folder's file and its manifest (the file's image is in its row)
		t.Fatalf("%d objects in the journal area", objects)
	}
	noPlaintextInState(t, e, "attack")
	ids := changeIDs(t, e.post("shed_version", map[string]any{"action": "changes"}, nil))
	wantOK(t, e.post("shed_version", map[string]any{"action": "undo", "change_id": ids[0]}, nil))
	wantOK(t, e.post("shed_version", map[string]any{"action": "undo", "change_id": ids[2]}, nil))
	for p, want := range map[string]string{"plan.md": secret, "d/x.md": secret} {
		r := e.post("shed_read", map[string]any{"zone": "storage", "path": p}, nil)
		wantOK(t, r)
		if !strings.Contains(r.raw, "attack at dawn") {
			t.Fatalf("%s after the undo: %s", p, r.raw)
		}
		e.sealedOnDisk("users/local/Storage/data/"+p, want)
	}
}

// The images of a user hold at most journal.max_percent of the quota: past it the oldest
// go, their changes say undoable=false ("evicted"), their objects leave the disk, and the
// newest stay undoable.
func TestJournalImagesEvicted(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1", "FILESHED_JOURNAL_MAX_PERCENT": "20"})
	for i := range 5 { // five 100 KB versions: 400 KB of images, over 20% of 1 MB
		content := fmt.Sprintf("%d", i) + strings.Repeat(fmt.Sprint(i), 100<<10)
		wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "big.txt", "content": content, "overwrite": true}, nil))
	}
	r := e.post("shed_version", map[string]any{"action": "changes"}, nil)
	wantOK(t, r)
	changes := r.Data["changes"].([]any)
	if len(changes) != 5 {
		t.Fatalf("changes: %s", r.raw)
	}
	newest, oldest := changes[0].(map[string]any), changes[3].(map[string]any)
	if newest["undoable"] != true || oldest["undoable"] != false || !strings.Contains(fmt.Sprint(oldest["why"]), "evicted") {
		t.Fatalf("after the eviction: newest %v, oldest overwrite %v", newest, oldest)
	}
	var held int64
	_ = filepath.Walk(filepath.Join(e.base, "users/local/journal"), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			held += fi.Size()
		}
		return err
	})
	if held > 1<<20/5 {
		t.Fatalf("the journal area holds %d bytes, over 20%% of the quota", held)
	}
	_, metrics := scrape(t, e, "")
	if !strings.Contains(metrics, "fileshed_journal_evictions_total 2") || !strings.Contains(metrics, "fileshed_journal_image_bytes_total 409604\n") {
		t.Errorf("metrics: evictions or image bytes missing:\n%s", metrics)
	}
	wantError(t, e.post("shed_version", map[string]any{"action": "undo", "change_id": oldest["id"]}, nil), "INVALID_PARAMETER")
	wantOK(t, e.post("shed_version", map[string]any{"action": "undo", "change_id": newest["id"]}, nil))
}

// noPlaintextInState checks the state database of an encrypted Storage: it holds inline
// before-images, each sealed (the encrypted format, named at random, not by its content),
// and none of its rows, nor any byte of its files (SQLite: the database and its log),
// holds secret.
func noPlaintextInState(t *testing.T, e *env, secret string) {
	t.Helper()
	rs, err := stateDB(t, e).Query(`SELECT image, image_data FROM journal WHERE image LIKE 'inline:%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	inline := 0
	for rs.Next() {
		var image string
		var data []byte
		if err := rs.Scan(&image, &data); err != nil {
			t.Fatal(err)
		}
		inline++
		sum := sha256.Sum256([]byte(secret))
		if !bytes.HasPrefix(data, sealedMagic) || bytes.Contains(data, []byte(secret)) || strings.Contains(image, hex.EncodeToString(sum[:])) {
			t.Errorf("an inline image not sealed: %s %q", image, data)
		}
	}
	if inline == 0 {
		t.Fatal("no inline image in the state database")
	}
	if e.cfg.State.Driver == store.Postgres {
		return
	}
	for _, f := range []string{"fileshed.sqlite", "fileshed.sqlite-wal"} {
		if b, err := os.ReadFile(filepath.Join(e.base, f)); err == nil && bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the plaintext %q", f, secret)
		}
	}
}
