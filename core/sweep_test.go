package core

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// A reservation that died with the process (killed between reserving and writing, so no
// temporary file is left to find) is reconciled at the next start after an unclean stop,
// and only then: a clean stop removes the marker.
func TestSweepReconcilesEveryOwnerAfterAnUncleanStop(t *testing.T) {
	t.Parallel()
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

// TestSweepSparesAHeldNameWrittenAsTheServerStarted (issue 34: TestGuardPutsBackContestedWrites
// failed with "no such file or directory" at its first write): a temporary name this process
// holds is a live write, whatever its file time. File times come from the kernel's coarse
// clock, a tick behind time.Now, so a write made just after the start can look older than
// the server; the start-up sweep running beside it removed its temporary file before the
// rename.
func TestSweepSparesAHeldNameWrittenAsTheServerStarted(t *testing.T) {
	t.Parallel()
	s, base := testService(t, nil)
	s.sweep() // the start-up sweep has ended: the sweeps below are the test's own
	dir := filepath.Join(base, "users", "ann", "Storage", "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	name, release := confine.HoldTemp()
	defer release()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("in flight"), 0o600); err != nil {
		t.Fatal(err)
	}
	tick := s.started.Add(-4 * time.Millisecond) // the coarse clock's lag at the start
	if err := os.Chtimes(p, tick, tick); err != nil {
		t.Fatal(err)
	}
	if n := s.sweepLeftovers(t.Context(), dir, s.staleTemp(t.Context())); n != 0 {
		t.Fatalf("the sweep removed %d names", n)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("a held temporary name was swept: %v", err)
	}
	release()
	if n := s.sweepLeftovers(t.Context(), dir, s.staleTemp(t.Context())); n != 1 {
		t.Fatalf("released (an error path left it), it is a leftover: removed %d", n)
	}
}
