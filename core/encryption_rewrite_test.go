package core

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSealWalkUnderFileLocks: migrate and disable rewrite each file under its lock. A file
// whose lock another call holds (a writer that took it before the walk, now waiting for the
// owner's lock) is skipped and reported, not rewritten beneath it; the next walk takes it.
// A link to another user's file is never followed; an upload is rewritten under its
// conversation's key. Disable decrypts back to the same bytes.
func TestSealWalkUnderFileLocks(t *testing.T) {
	t.Parallel()
	s, base := testService(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": "test-master-key-0123456789abcdef0123456789"})
	ctx := context.Background()
	bob := Caller{UserID: "bob", ConvID: "c1"}
	z, err := s.ResolveZone(ctx, bob, "storage", "", true)
	must(t, err)
	defer z.Close()
	data := z.fs.Dir()
	put("busy.txt", "being written\n")(t, data)
	put("free.txt", "free\n")(t, data)
	alice := filepath.Join(base, "users", "alice", "Storage", "data", "secret.txt")
	put("secret.txt", "alice's\n")(t, filepath.Dir(alice))
	must(t, os.Symlink(alice, filepath.Join(data, "alice.txt")))
	up := s.Layout().UploadsOf("bob", "c1")
	put("up.txt", "an upload\n")(t, up)
	added, err := s.NewUserKey(ctx, "bob")
	must(t, err)
	if !added {
		t.Fatal("no key")
	}
	s.ForgetUserKey("bob")
	key := s.UserKey(ctx, "bob").Key
	sealed := func(p string) bool {
		b, err := os.ReadFile(p)
		must(t, err)
		return bytes.HasPrefix(b, []byte("FSHDENC\x00"))
	}

	unlockFile, err := s.LockPath(ctx, z, "busy.txt")
	must(t, err)
	walk := func(op SealOp) Sealed {
		release, err := s.HoldKeyChange(ctx, "bob")
		must(t, err)
		defer release()
		n, err := s.SealWalk(ctx, bob, key, op)
		must(t, err)
		return n
	}
	n := walk(SealEncrypt)
	if sealed(filepath.Join(data, "busy.txt")) {
		t.Fatal("busy.txt was rewritten while another call held its lock")
	}
	if n.Changed != 2 || n.Plain != 3 || len(n.Errors) != 1 || !strings.HasPrefix(n.Errors[0], "Storage/busy.txt: another call is writing it") {
		t.Fatalf("first migrate: %+v", n)
	}
	for _, p := range []string{filepath.Join(data, "free.txt"), filepath.Join(up, "up.txt")} {
		if !sealed(p) {
			t.Errorf("%s is not encrypted", p)
		}
	}
	if sealed(alice) {
		t.Fatal("a link led the walk to alice's file")
	}
	unlockFile()
	if n = walk(SealEncrypt); n.Changed != 1 || n.Encrypted != 2 || len(n.Errors) != 0 || !sealed(filepath.Join(data, "busy.txt")) {
		t.Fatalf("second migrate: %+v", n)
	}
	if n = walk(SealDecrypt); n.Changed != 3 || len(n.Errors) != 0 {
		t.Fatalf("disable: %+v", n)
	}
	for p, want := range map[string]string{filepath.Join(data, "busy.txt"): "being written\n", filepath.Join(up, "up.txt"): "an upload\n", alice: "alice's\n"} {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q", p, b, err, want)
		}
	}
}
