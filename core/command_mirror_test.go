package core

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCommandMirrorTurnAndUnsaved: the kernel's mirror of an encrypted zone's command holds
// the owner's turn from the copy to Close (a second copy waits, and times out), and its
// write-back takes out of the owner's usage what the deadline kept out of the zone.
func TestCommandMirrorTurnAndUnsaved(t *testing.T) {
	t.Parallel()
	s, _ := testService(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": "test-master-key-0123456789abcdef0123456789"})
	ctx := context.Background()
	bob := Caller{UserID: "bob", ConvID: "c1"}
	_, err := s.NewUserKey(ctx, "bob")
	must(t, err)
	s.ForgetUserKey("bob")
	z, err := s.ResolveZone(ctx, bob, "storage", "", true)
	must(t, err)
	defer z.Close()
	if !z.fs.Sealed() {
		t.Fatal("the zone is not sealed")
	}
	_, _, err = s.Reconcile(ctx, z.Owner)
	must(t, err)

	call, cut := context.WithCancel(ctx)
	cm, err := s.BeginMirror(call, bob, z)
	must(t, err)
	must(t, cm.Copy(call, nil))
	wait, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = s.BeginMirror(wait, bob, z)
	stop()
	wantCode(t, err, Timeout)

	// The command made new.txt in the copy, and its measure charged it to the usage; the
	// deadline ends before the write-back carries it into the zone.
	put("new.txt", "0123456789")(t, cm.Zone().fs.Dir())
	grown := Amount{Bytes: 10, Files: 1}
	must(t, s.db.Adjust(ctx, z.Owner, grown))
	before, err := s.db.Usage(ctx, z.Owner)
	must(t, err)
	cut()
	_, _, err = cm.WriteBack(ctx)
	must(t, err)
	if cm.NotSaved != 1 || cm.Unsaved != grown {
		t.Fatalf("not saved %d, unsaved %+v: want the new file cut", cm.NotSaved, cm.Unsaved)
	}
	after, err := s.db.Usage(ctx, z.Owner)
	must(t, err)
	if d := Sub(before, after); d != grown {
		t.Errorf("usage went from %+v to %+v: what the deadline kept out was not taken back", before, after)
	}
	if _, err := os.Lstat(filepath.Join(z.fs.Dir(), "new.txt")); err == nil {
		t.Error("new.txt reached the zone after the deadline")
	}
	copyDir := cm.Root
	cm.Close()
	cm.Close()
	if _, err := os.Stat(copyDir); err == nil {
		t.Error("the decrypted copy is still on disk after Close")
	}
	again, err := s.BeginMirror(ctx, bob, z)
	must(t, err)
	again.Close()
}
