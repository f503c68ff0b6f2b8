package handlers_test

import (
	"archive/tar"
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// masterKey is the test servers' encryption.master_key.
const masterKey = "test-master-key-0123456789abcdef0123456789"

// sealedMagic starts every encrypted file on disk.
var sealedMagic = []byte("FSHDENC\x00")

// startSealed starts a server with a master key and encryption set up for the user "local".
func startSealed(t testing.TB, vars map[string]string) *env {
	t.Helper()
	if vars == nil {
		vars = map[string]string{}
	}
	vars["FILESHED_ENCRYPTION_MASTER_KEY"] = masterKey
	e := start(t, vars)
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "setup"}, nil))
	return e
}

// sealedOnDisk asserts that the file rel (from the storage base) is encrypted on disk and
// holds none of the plaintext.
func (e *env) sealedOnDisk(rel, plain string) {
	e.t.Helper()
	raw, err := os.ReadFile(filepath.Join(e.base, rel))
	if err != nil {
		e.t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, sealedMagic) {
		e.t.Fatalf("%s is not encrypted on disk: %q", rel, raw[:min(len(raw), 40)])
	}
	if len(plain) >= 4 && bytes.Contains(raw, []byte(plain)) {
		e.t.Fatalf("%s holds its plaintext on disk", rel)
	}
}

// TestEncryptionLifecycle: setup encrypts new files, status counts, migrate encrypts the
// old ones (twice is a no-op), reads are transparent, disable decrypts everything.
func TestEncryptionLifecycle(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": masterKey})
	st := e.post("shed_encryption", map[string]any{"action": "status"}, nil)
	wantOK(t, st)
	if st.Data["status"] != "not_setup" || st.Data["available"] != true {
		t.Fatalf("status before setup: %s", st.raw)
	}
	wantError(t, e.post("shed_encryption", map[string]any{"action": "migrate"}, nil), "ENCRYPTION_NOT_ENABLED")
	e.write(zoneDir+"old.txt", "written before setup\n")
	e.write("users/local/Uploads/c1/up.txt", "an upload before setup\n")

	wantOK(t, e.post("shed_encryption", map[string]any{"action": "setup"}, nil))
	wantError(t, e.post("shed_encryption", map[string]any{"action": "setup"}, nil), "ENCRYPTION_ALREADY_ENABLED")
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "new.txt", "content": "secret plans\n"}, nil))
	e.sealedOnDisk(zoneDir+"new.txt", "secret plans")
	r := e.post("shed_read", map[string]any{"zone": "storage", "path": "new.txt"}, nil)
	wantOK(t, r)
	if r.Data["content"] != "secret plans\n" || r.Data["encrypted"] != true || r.Data["size"] != 13.0 {
		t.Fatalf("read of an encrypted file: %s", r.raw)
	}
	st = e.post("shed_encryption", map[string]any{"action": "status"}, nil)
	if st.Data["status"] != "active" || st.Data["files_encrypted"] != 1.0 || st.Data["files_unencrypted"] != 2.0 {
		t.Fatalf("status after setup: %s", st.raw)
	}

	m := e.post("shed_encryption", map[string]any{"action": "migrate"}, nil)
	wantOK(t, m)
	if m.Data["files_changed"] != 2.0 {
		t.Fatalf("migrate: %s", m.raw)
	}
	e.sealedOnDisk(zoneDir+"old.txt", "written before setup")
	e.sealedOnDisk("users/local/Uploads/c1/up.txt", "an upload before")
	if m = e.post("shed_encryption", map[string]any{"action": "migrate"}, nil); m.Data["files_changed"] != 0.0 {
		t.Fatalf("second migrate changed files: %s", m.raw)
	}
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "old.txt"}, nil)
	if r.Data["content"] != "written before setup\n" {
		t.Fatalf("read after migrate: %s", r.raw)
	}
	r = e.post("shed_read", map[string]any{"zone": "uploads", "path": "up.txt"}, map[string]string{"X-OpenWebUI-Chat-Id": "c1"})
	if r.Data["content"] != "an upload before setup\n" {
		t.Fatalf("upload after migrate: %s", r.raw)
	}
	if u := e.used(t); u != int64(len("written before setup\n")+len("an upload before setup\n")+len("secret plans\n")) {
		t.Fatalf("quota counts %d bytes, want the plaintext sizes", u)
	}

	wantError(t, e.post("shed_encryption", map[string]any{"action": "disable"}, nil), "CONFIRMATION_REQUIRED")
	d := e.post("shed_encryption", map[string]any{"action": "disable", "confirm": true}, nil)
	wantOK(t, d)
	if d.Data["files_changed"] != 3.0 {
		t.Fatalf("disable: %s", d.raw)
	}
	for rel, want := range map[string]string{"old.txt": "written before setup\n", "new.txt": "secret plans\n"} {
		if got := e.disk(rel); got != want {
			t.Fatalf("%s after disable: %q", rel, got)
		}
	}
	wantError(t, e.post("shed_encryption", map[string]any{"action": "disable", "confirm": true}, nil), "ENCRYPTION_NOT_ENABLED")
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "after.txt", "content": "plain again"}, nil))
	if got := e.disk("after.txt"); got != "plain again" {
		t.Fatalf("a write after disable is not plain: %q", got)
	}
	if st = e.post("shed_encryption", map[string]any{"action": "status"}, nil); st.Data["status"] != "disabled" {
		t.Fatalf("status after disable: %s", st.raw)
	}
	// Setup again takes the kept key up again.
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "setup"}, nil))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "again.txt", "content": "sealed again"}, nil))
	e.sealedOnDisk(zoneDir+"again.txt", "sealed again")
}

// TestEncryptionUnavailableWithoutMasterKey: no master key, no setup.
func TestEncryptionUnavailableWithoutMasterKey(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	wantError(t, e.post("shed_encryption", map[string]any{"action": "setup"}, nil), "ENCRYPTION_UNAVAILABLE")
	st := e.post("shed_encryption", map[string]any{"action": "status"}, nil)
	if st.Data["available"] != false || !strings.Contains(st.Message, "not enabled") {
		t.Fatalf("status: %s", st.raw)
	}
}

// TestDecryptionRequiredWithoutKey: after disable, an encrypted file left in the zone (here a
// copy of one taken before) is refused with DECRYPTION_REQUIRED by a server without the
// master key, never served as ciphertext; the plain files still read.
func TestDecryptionRequiredWithoutKey(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "s.txt", "content": "sealed once"}, nil))
	sealed, err := os.ReadFile(filepath.Join(e.base, zoneDir, "s.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "disable", "confirm": true}, nil))
	e.write(zoneDir+"stray.txt", string(sealed))

	cfg := e.restartConfig(t, nil)
	e.stop()
	b := serve(t, cfg)
	r := b.post("shed_read", map[string]any{"zone": "storage", "path": "s.txt"}, nil)
	if r.Data["content"] != "sealed once" {
		t.Fatalf("a decrypted file without the key: %s", r.raw)
	}
	for _, tool := range []string{"shed_read", "shed_read_bytes", "shed_hexdump"} {
		wantError(t, b.post(tool, map[string]any{"zone": "storage", "path": "stray.txt"}, nil), "DECRYPTION_REQUIRED")
	}
}

// TestEncryptedExecNamedFiles: a command that names its files works on a copy of those only:
// new files in subfolders, moves and sorted output come back encrypted and right, and the
// files the command did not name are not rewritten (their ciphertext is byte-identical).
func TestEncryptedExecNamedFiles(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	for p, c := range map[string]string{"notes/a.txt": "b\na\nc\n", "other/big.txt": strings.Repeat("untouched\n", 10_000)} {
		wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": p, "content": c}, nil))
	}
	before, err := os.ReadFile(filepath.Join(e.base, zoneDir, "other/big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range []map[string]any{
		{"cmd": "cp", "args": []string{"notes/a.txt", "notes/copy.txt"}},
		{"cmd": "mkdir", "args": []string{"sorted"}},
		{"cmd": "sort", "args": []string{"-o", "sorted/out.txt", "notes/a.txt"}},
		{"cmd": "mv", "args": []string{"notes/copy.txt", "notes/moved.txt"}},
		{"cmd": "wc", "args": []string{"-l", "notes/a.txt"}, "stdout_file": "counts/a.txt"},
	} {
		call["zone"] = "storage"
		r := e.post("shed_exec", call, nil)
		if !r.Success {
			t.Fatalf("%v: %s\n%s", call["cmd"], r.raw, e.logs.String())
		}
		if r.Data["returncode"] != 0.0 {
			t.Fatalf("%v: %s", call["cmd"], r.raw)
		}
	}
	for p, want := range map[string]string{"notes/moved.txt": "b\na\nc\n", "sorted/out.txt": "a\nb\nc\n"} {
		r := e.post("shed_read", map[string]any{"zone": "storage", "path": p}, nil)
		if r.Data["content"] != want {
			t.Fatalf("%s: %s", p, r.raw)
		}
		e.sealedOnDisk(zoneDir+p, want)
	}
	if r := e.post("shed_read", map[string]any{"zone": "storage", "path": "counts/a.txt"}, nil); !strings.HasPrefix(r.Data["content"].(string), "3 ") {
		t.Fatalf("stdout_file: %s", r.raw)
	}
	if _, err := os.Stat(filepath.Join(e.base, zoneDir, "notes/copy.txt")); !os.IsNotExist(err) {
		t.Fatalf("the moved file is still there: %v", err)
	}
	// A folder the zone does not have is not in the copy either: touch fails as in plain.
	r := e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "touch", "args": []string{"nodir/x.txt"}}, nil)
	if !r.Success || r.Data["returncode"] == 0.0 {
		t.Fatalf("touch in a missing folder: %s", r.raw)
	}
	after, _ := os.ReadFile(filepath.Join(e.base, zoneDir, "other/big.txt"))
	if !bytes.Equal(before, after) {
		t.Fatal("a file the commands did not name was rewritten")
	}
}

// TestEncryptedSQLiteConcurrentWrites: parallel INSERTs into one database of an encrypted
// zone lose no row: each call decrypts the database under the file's write lock, so none
// works on a copy another call is about to replace.
func TestEncryptedSQLiteConcurrentWrites(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	wantOK(t, sqIn(e, "storage", "c.db", map[string]any{"query": "CREATE TABLE t(n INTEGER)"}))
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := sqIn(e, "storage", "c.db", map[string]any{"query": fmt.Sprintf("INSERT INTO t VALUES (%d)", i)})
			if !r.Success {
				errs <- r.raw
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Fatalf("insert: %s", msg)
	}
	r := sqIn(e, "storage", "c.db", map[string]any{"query": "SELECT count(*) FROM t"})
	if rows := r.Data["rows"].([]any); rows[0].([]any)[0] != float64(n) {
		t.Fatalf("rows after %d parallel inserts: %s", n, r.raw)
	}
}

// TestEncryptedExecSymlinkOut: an archive extracted in an encrypted zone that holds a symlink
// leaving the zone: the zone refuses the link (listed in data.not_written_back), and every
// other extracted file still comes back, encrypted.
func TestEncryptedExecSymlinkOut(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	body := "extracted content\n"
	for _, h := range []*tar.Header{
		{Name: "out/ok.txt", Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg},
		{Name: "out/escape", Linkname: "../../../../../etc/passwd", Typeflag: tar.TypeSymlink, Mode: 0o777},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			_, _ = tw.Write([]byte(body))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "a.tar", "file_type": "bytes",
		"content_format": "base64", "content": base64.StdEncoding.EncodeToString(buf.Bytes())}, nil))
	r := e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "tar", "args": []string{"-xf", "a.tar"}}, nil)
	if !r.Success || r.Data["returncode"] != 0.0 {
		t.Fatalf("tar -xf: %s", r.raw)
	}
	if skipped, _ := r.Data["not_written_back"].([]any); len(skipped) != 1 || skipped[0] != "out/escape" {
		t.Fatalf("not_written_back: %s", r.raw)
	}
	if _, err := os.Lstat(filepath.Join(e.base, zoneDir, "out/escape")); !os.IsNotExist(err) {
		t.Fatalf("the escaping link is in the zone: %v", err)
	}
	e.sealedOnDisk(zoneDir+"out/ok.txt", "extracted content")
	if got := e.post("shed_read", map[string]any{"zone": "storage", "path": "out/ok.txt"}, nil); got.Data["content"] != body {
		t.Fatalf("extracted file: %s", got.raw)
	}
}
