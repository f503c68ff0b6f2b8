package handlers_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Conditional writes (issue 37): every answer that returns or changes content names its
// version (hash), and every write given expected_hash is refused, FILE_CHANGED, nothing
// written, when the file holds another version.

// sha16 is the content hash the answers carry: the first 16 hex digits of the SHA-256.
func sha16(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

// TestReadAnswersCarryTheHash: shed_read, shed_read_bytes, shed_file_type and the locked
// edit's open name the content's hash; a read that does not reach the end has none.
func TestReadAnswersCarryTheHash(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	const text = "one\r\ntwo\nthree"
	e.write(zoneDir+"f.txt", text)
	want := sha16(text)
	for name, r := range map[string]reply{
		"read":          e.post("shed_read", map[string]any{"zone": "storage", "path": "f.txt"}, nil),
		"read a range":  e.post("shed_read", map[string]any{"zone": "storage", "path": "f.txt", "start_line": 2, "end_line": 2}, nil),
		"read offset 0": e.post("shed_read", map[string]any{"zone": "storage", "path": "f.txt", "offset": 0}, nil),
		"read_bytes":    e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": "f.txt"}, nil),
		"file_type":     e.post("shed_file_type", map[string]any{"zone": "storage", "path": "f.txt"}, nil),
		"lockedit open": e.post("shed_lockedit", map[string]any{"action": "open", "zone": "storage", "path": "f.txt"}, nil),
	} {
		wantOK(t, r)
		if r.Data["hash"] != want {
			t.Errorf("%s: hash %v, want %s: %s", name, r.Data["hash"], want, r.raw)
		}
	}
	part := e.post("shed_read", map[string]any{"zone": "storage", "path": "f.txt", "offset": 5}, nil)
	wantOK(t, part)
	if _, ok := part.Data["hash"]; ok {
		t.Errorf("a read from offset 5 names a hash it did not see whole: %s", part.raw)
	}
}

// TestExpectedHashOnEveryWrite: each write takes expected_hash: the current hash writes
// (and answers the new hash where it writes content), another hash is FILE_CHANGED with
// details.current_hash and the file untouched, "new" refuses an existing file.
func TestExpectedHashOnEveryWrite(t *testing.T) {
	t.Parallel()
	const old = "alpha\nbeta\n"
	cases := []struct {
		name   string
		tool   string
		args   map[string]any
		result string // the content of f.txt after a successful write ("" = not checked)
	}{
		{"create_file", "shed_create_file", map[string]any{"content": "new\n"}, "new\n"},
		{"patch_text", "shed_patch_text", map[string]any{"position": "after", "line": 1, "content": "x"}, "alpha\nx\nbeta\n"},
		{"patch_bytes", "shed_patch_bytes", map[string]any{"content": "21"}, old + "!"},
		{"convert_eol", "shed_convert_eol", map[string]any{"to": "dos"}, "alpha\r\nbeta\r\n"},
		{"delete", "shed_delete", map[string]any{}, ""},
		{"rename", "shed_rename", map[string]any{"old_path": "f.txt", "new_path": "g.txt"}, ""},
		{"transfer onto an existing file", "shed_transfer", map[string]any{"action": "documents_to_storage", "src": "src.txt", "dest": "f.txt", "overwrite": true}, "from documents\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, nil)
			e.write(zoneDir+"f.txt", old)
			e.write(documentsDir+"/src.txt", "from documents\n")
			call := func(expected string) reply {
				args := map[string]any{"zone": "storage", "path": "f.txt", "expected_hash": expected}
				if tc.tool == "shed_transfer" || tc.tool == "shed_rename" {
					delete(args, "path")
				}
				if tc.tool == "shed_transfer" {
					delete(args, "zone")
				}
				for k, v := range tc.args {
					args[k] = v
				}
				return e.post(tc.tool, args, nil)
			}
			bads := []string{sha16("something else"), "new"}
			if tc.tool == "shed_rename" {
				bads = bads[:1] // "new" is about new_path there (TestExpectedHashNew)
			}
			for _, bad := range bads {
				r := call(bad)
				wantError(t, r, "FILE_CHANGED")
				if r.Details["current_hash"] != sha16(old) || !strings.Contains(r.Hint, "expected_hash") {
					t.Fatalf("expected %s: details and hint: %s", bad, r.raw)
				}
				if e.disk("f.txt") != old || exists(e, zoneDir+"g.txt") || !exists(e, documentsDir+"/src.txt") {
					t.Fatalf("expected %s: something was written", bad)
				}
			}
			r := call(strings.ToUpper(sha16(old)))
			wantOK(t, r)
			if tc.result != "" {
				if got := e.disk("f.txt"); got != tc.result {
					t.Fatalf("content %q, want %q", got, tc.result)
				}
				if tc.tool != "shed_transfer" && r.Data["hash"] != sha16(tc.result) {
					t.Fatalf("the answer's hash %v, want %s: %s", r.Data["hash"], sha16(tc.result), r.raw)
				}
			}
		})
	}
}

// TestExpectedHashNew: "new" creates a file that does not exist, and a write expecting a
// version of a file deleted since is FILE_CHANGED with current_hash "new".
func TestExpectedHashNew(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.post("shed_create_file", map[string]any{"zone": "storage", "path": "n.txt", "content": "hi", "expected_hash": "new"}, nil)
	wantOK(t, r)
	if r.Data["hash"] != sha16("hi") || e.disk("n.txt") != "hi" {
		t.Fatalf("create with new: %s", r.raw)
	}
	r = e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "gone.txt", "content": "x", "expected_hash": sha16("was")}, nil)
	wantError(t, r, "FILE_CHANGED")
	if r.Details["current_hash"] != "new" || exists(e, zoneDir+"gone.txt") {
		t.Fatalf("a deleted file: %s", r.raw)
	}
	// rename with "new": new_path must not exist.
	e.write(zoneDir+"taken.txt", "t")
	r = e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "n.txt", "new_path": "taken.txt", "overwrite": true, "expected_hash": "new"}, nil)
	wantError(t, r, "FILE_CHANGED")
	wantOK(t, e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "n.txt", "new_path": "free.txt", "expected_hash": "new"}, nil))
}

// TestExpectedHashHostile: a value that is no hash, a folder, a link to another file.
func TestExpectedHashHostile(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(zoneDir+"f.txt", "f")
	e.write(zoneDir+"dir/x", "x")
	if err := os.Symlink("f.txt", filepath.Join(e.base, zoneDir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../../etc/passwd", "zz", strings.Repeat("a", 4096), "0123456789abcdeg"} {
		r := e.post("shed_create_file", map[string]any{"zone": "storage", "path": "f.txt", "content": "x", "expected_hash": bad}, nil)
		wantError(t, r, "INVALID_PARAMETER")
		if len(r.raw) > 2000 || e.disk("f.txt") != "f" {
			t.Fatalf("%.40q: %d bytes of answer, or written", bad, len(r.raw))
		}
	}
	wantError(t, e.post("shed_delete", map[string]any{"zone": "storage", "path": "dir", "expected_hash": sha16("x")}, nil), "INVALID_PARAMETER")
	// A link is checked by the content it leads to, and only the link goes.
	wantError(t, e.post("shed_delete", map[string]any{"zone": "storage", "path": "link", "expected_hash": sha16("x")}, nil), "FILE_CHANGED")
	wantOK(t, e.post("shed_delete", map[string]any{"zone": "storage", "path": "link", "expected_hash": sha16("f")}, nil))
	if e.disk("f.txt") != "f" {
		t.Fatal("the link's target went too")
	}
}

// TestLockeditSaveExpectsTheOriginal: a locked edit's save given the hash of its open is
// refused when the original was changed meanwhile (an unsafe patch), and the copy is kept.
func TestLockeditSaveExpectsTheOriginal(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(zoneDir+"f.txt", "v1\n")
	open := e.post("shed_lockedit", map[string]any{"action": "open", "zone": "storage", "path": "f.txt"}, nil)
	wantOK(t, open)
	h := open.Data["hash"].(string)
	wantOK(t, e.post("shed_lockedit", map[string]any{"action": "overwrite", "zone": "storage", "path": "f.txt", "content": "mine\n"}, nil))
	other := map[string]string{"X-OpenWebUI-Chat-Id": "other"}
	wantOK(t, e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "f.txt", "content": "theirs\n", "safe": false}, other))
	r := e.post("shed_lockedit", map[string]any{"action": "save", "zone": "storage", "path": "f.txt", "expected_hash": h}, nil)
	wantError(t, r, "FILE_CHANGED")
	if e.disk("f.txt") != "v1\ntheirs\n" {
		t.Fatalf("the save wrote: %q", e.disk("f.txt"))
	}
	r = e.post("shed_lockedit", map[string]any{"action": "save", "zone": "storage", "path": "f.txt", "expected_hash": sha16("v1\ntheirs\n")}, nil)
	wantOK(t, r)
	if e.disk("f.txt") != "mine\n" || r.Data["hash"] != sha16("mine\n") {
		t.Fatalf("save: %q %s", e.disk("f.txt"), r.raw)
	}
}

// TestExpectedHashRaceOnTwoReplicas: two conversations on two replicas (PostgreSQL state,
// one storage) read the same version and write, each with the hash it read, at once:
// exactly one write lands, the other is FILE_CHANGED, and nothing is lost silently.
func TestExpectedHashRaceOnTwoReplicas(t *testing.T) {
	t.Parallel() // owns its storage, its database and its two servers
	vars := withPostgres(t, map[string]string{"FILESHED_STORAGE_BASE_PATH": t.TempDir()})
	a, b := replicaOf(t, vars), replicaOf(t, vars)
	a.write("users/local/Documents/data/plan.md", "v1\n")
	for round := range 5 {
		r := a.post("shed_read", map[string]any{"zone": "documents", "path": "plan.md"}, nil)
		wantOK(t, r)
		h := r.Data["hash"].(string)
		var wg sync.WaitGroup
		replies := make([]reply, 2)
		for i, e := range []*env{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				replies[i] = e.post("shed_patch_text", map[string]any{"zone": "documents", "path": "plan.md", "content": strings.Repeat("x", i+1) + "\n",
					"expected_hash": h}, map[string]string{"X-OpenWebUI-Chat-Id": "conv" + string(rune('a'+i))})
			}()
		}
		wg.Wait()
		ok, changed := 0, 0
		for _, r := range replies {
			switch {
			case r.Success:
				ok++
			case r.Error == "FILE_CHANGED":
				changed++
			default:
				t.Fatalf("round %d: %s", round, r.raw)
			}
		}
		if ok != 1 || changed != 1 {
			t.Fatalf("round %d: %d writes landed, %d refused: %s | %s", round, ok, changed, replies[0].raw, replies[1].raw)
		}
	}
}

// TestExpectedHashInEncryptedStorage: the hash is the plaintext's, in the answers and in the
// transaction's check, whatever is on disk.
func TestExpectedHashInEncryptedStorage(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": masterKey})
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "setup"}, nil))
	r := e.post("shed_create_file", map[string]any{"zone": "storage", "path": "s.txt", "content": "secret\n", "expected_hash": "new"}, nil)
	wantOK(t, r)
	e.sealedOnDisk(zoneDir+"s.txt", "secret\n")
	read := e.post("shed_read", map[string]any{"zone": "storage", "path": "s.txt"}, nil)
	if read.Data["hash"] != sha16("secret\n") || r.Data["hash"] != sha16("secret\n") {
		t.Fatalf("hashes: write %v, read %v", r.Data["hash"], read.Data["hash"])
	}
	wantError(t, e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "s.txt", "content": "x", "expected_hash": sha16("other")}, nil), "FILE_CHANGED")
	wantOK(t, e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "s.txt", "content": "x", "expected_hash": sha16("secret\n")}, nil))
}
