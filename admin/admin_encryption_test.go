package admin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/admin"
)

// TestAdminVerifyEncryptionKeys: verify is clean while the master key unwraps every user's
// data key, and reports a problem (exit 1) when run with another master key, also for a
// storage whose encrypted files' quotas it must count by plaintext size.
func TestAdminVerifyEncryptionKeys(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	key := "admin-test-master-key-0123456789abcdef"
	cfg := config(t, base)
	cfg.Encryption.MasterKey = key
	l := serveWith(t, cfg)
	l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": "before.txt", "content": "plain before setup"})
	l.ok(t, "shed_encryption", map[string]any{"action": "setup"})
	l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": "secret.txt", "content": "sealed content"})
	l.close()

	verify := func(master string) (int, string) {
		c := config(t, base)
		c.Encryption.MasterKey = master
		var out, errOut strings.Builder
		code := admin.Run(c, []string{"verify"}, &out, &errOut)
		return code, out.String() + errOut.String()
	}
	if code, out := verify(key); code != 0 || !strings.Contains(out, `"encryption_keys_not_unwrappable": 0`) {
		t.Fatalf("verify with the right key: %d %s", code, out)
	}
	if code, out := verify("another-master-key-0123456789abcdef000"); code != 1 || !strings.Contains(out, `"encryption_keys_not_unwrappable": 1`) {
		t.Fatalf("verify with another key: %d %s", code, out)
	}
}

// TestAdminEncryptionRotate: rotate re-wraps every data key from the old master key to the
// configured one; the server then reads the encrypted files with the new key only, and a
// second run changes nothing.
func TestAdminEncryptionRotate(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	oldKey, newKey := "rotate-old-master-key-0123456789abcdef", "rotate-new-master-key-0123456789abcdef"
	start := func(master string) *live {
		cfg := config(t, base)
		cfg.Encryption.MasterKey = master
		return serveWith(t, cfg)
	}
	l := start(oldKey)
	l.ok(t, "shed_encryption", map[string]any{"action": "setup"})
	l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": "s.txt", "content": "kept across rotation"})
	l.close()

	oldFile := filepath.Join(t.TempDir(), "old.key")
	if err := os.WriteFile(oldFile, []byte(oldKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rotate := func() (int, string) {
		c := config(t, base)
		c.Encryption.MasterKey = newKey
		var out, errOut strings.Builder
		code := admin.Run(c, []string{"encryption", "rotate", "--old-key-file", oldFile}, &out, &errOut)
		return code, out.String() + errOut.String()
	}
	if code, out := rotate(); code != 0 || !strings.Contains(out, "rotated 1 user key(s), 0 already") {
		t.Fatalf("rotate: %d %s", code, out)
	}
	if code, out := rotate(); code != 0 || !strings.Contains(out, "rotated 0 user key(s), 1 already") {
		t.Fatalf("second rotate: %d %s", code, out)
	}
	l = start(newKey)
	r := l.call(t, "shed_read", map[string]any{"zone": "storage", "path": "s.txt"}, "")
	if r["success"] != true || r["data"].(map[string]any)["content"] != "kept across rotation" {
		t.Fatalf("read with the new key: %v", r)
	}
	l.close()
	l = start(oldKey)
	if r := l.call(t, "shed_read", map[string]any{"zone": "storage", "path": "s.txt"}, ""); r["error"] != "INVALID_ENCRYPTION_KEY" {
		t.Fatalf("read with the old key after rotation: %v", r)
	}
}
