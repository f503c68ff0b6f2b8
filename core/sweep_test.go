package core

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// A reservation that died with the process (killed between reserving and writing, so no
// temporary file is left to find) is reconciled at the next start after an unclean stop,
// and only then: a clean stop removes the marker.
func TestSweepReconcilesEveryOwnerAfterAnUncleanStop(t *testing.T) {
	s, base := testService(t, nil)
	ctx := context.Background()
	o := store.Owner{Kind: "user", ID: "ann"}
	dir := filepath.Join(base, "users", "ann", "Storage", "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), make([]byte, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Reconcile(ctx, o); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(base, runningMarker)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("a running server has no marker: %v", err)
	}
	dead := func() { // a reservation of 5000 bytes whose write never happened
		if err := s.db.SetUsage(ctx, o, Amount{Bytes: 5100, Files: 1}); err != nil {
			t.Fatal(err)
		}
	}
	usageAfterRestart := func(crash bool) int64 {
		t.Helper()
		s.Close()
		if crash {
			os.WriteFile(marker, nil, 0o600) // what kill -9 leaves: the marker of the dead server
		} else if _, err := os.Stat(marker); err == nil {
			t.Fatal("a clean stop left the marker")
		}
		var err error
		if s, err = New(s.cfg, Options{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		wait := 300 * time.Millisecond // long enough for the sweep of one owner
		if crash {
			wait = 10 * time.Second
		}
		deadline := time.Now().Add(wait)
		for {
			used, _ := s.db.Usage(ctx, o)
			if used.Bytes == 100 || time.Now().After(deadline) {
				return used.Bytes
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	dead()
	if used := usageAfterRestart(false); used != 5100 {
		t.Fatalf("after a clean stop the sweep should not measure (usage %d)", used)
	}
	dead()
	if used := usageAfterRestart(true); used != 100 {
		t.Fatalf("after an unclean stop the dead reservation stays: usage %d, want 100", used)
	}
}
