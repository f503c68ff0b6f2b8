package admin_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/admin"
)

// objectOf is where the plain journal object of content lives under base (user local).
func objectOf(base, content string) string {
	sum := sha256.Sum256([]byte(content))
	name := hex.EncodeToString(sum[:])
	return filepath.Join(base, "users/local/journal/objects", name[:2], name)
}

// TestAdminVerifyJournalImages: verify reads every before-image the journal names: sound
// ones pass; a deleted object, an object whose bytes no longer match its hash, and a
// folder's image whose member object is gone are each a problem naming the image (exit 1).
func TestAdminVerifyJournalImages(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	l := serveWith(t, config(t, base, "--journal-inline-kb", "0")) // every image an object
	for _, f := range []struct{ path, content string }{
		{"a.txt", "first a"}, {"a.txt", "second a"}, {"b.txt", "first b"}, {"b.txt", "second b"},
		{"d/x.txt", "inside d"},
	} {
		l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": f.path, "content": f.content, "overwrite": true})
	}
	l.ok(t, "shed_delete", map[string]any{"zone": "storage", "path": "d"})
	l.close()
	if code, out, errOut := run(t, base, "verify"); code != 0 || strings.Contains(out, "journal_images") {
		t.Fatalf("verify of a sound journal: %d %s %s", code, out, errOut)
	}
	if err := os.Remove(objectOf(base, "first a")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(objectOf(base, "first b"), []byte("first B"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(objectOf(base, "inside d")); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, base, "verify")
	for _, want := range []string{`"user local": [`, `: missing"`, `: damaged (its content does not match its hash)"`,
		`missing (object of \"x.txt\")"`, `"problems": 3`} {
		if !strings.Contains(out, want) {
			t.Errorf("verify lacks %s:\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("verify with damaged images: exit %d", code)
	}
}

// TestAdminVerifySealedJournalImages: in an encrypted Storage the objects are named at
// random; verify decrypts each whole, so a flipped byte is a problem (exit 1).
func TestAdminVerifySealedJournalImages(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	key := "admin-test-master-key-0123456789abcdef"
	cfg := config(t, base, "--journal-inline-kb", "0") // the image an object
	cfg.Encryption.MasterKey = key
	l := serveWith(t, cfg)
	l.ok(t, "shed_encryption", map[string]any{"action": "setup"})
	l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": "s.txt", "content": "sealed before"})
	l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": "s.txt", "content": "sealed after", "overwrite": true})
	l.close()
	verify := func() (int, string) {
		var out, errOut strings.Builder
		code := admin.Run(cfg, []string{"verify"}, &out, &errOut)
		return code, out.String() + errOut.String()
	}
	if code, out := verify(); code != 0 || strings.Contains(out, "journal_images") {
		t.Fatalf("verify of a sound sealed journal: %d %s", code, out)
	}
	var objects []string
	_ = filepath.WalkDir(filepath.Join(base, "users/local/journal/objects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			objects = append(objects, p)
		}
		return nil
	})
	if len(objects) != 1 {
		t.Fatalf("objects %q, want the one image", objects)
	}
	b, err := os.ReadFile(objects[0])
	if err != nil || strings.Contains(string(b), "sealed before") {
		t.Fatalf("the image is not sealed: %q, %v", b, err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(objects[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := verify(); code != 1 || !strings.Contains(out, `: damaged (it does not decrypt)"`) {
		t.Fatalf("verify with a flipped byte: %d %s", code, out)
	}
}
