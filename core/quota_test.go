package core

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// TestFirstReservationsCannotOvershoot: the first reservations of an owner in a process race
// its first-use measurement; a measurement written after a reservation would erase it, and
// two 6 MB writes would then both fit a 10 MB quota. Many fresh services, 8 racers each.
func TestFirstReservationsCannotOvershoot(t *testing.T) {
	t.Parallel()
	for round := range 40 {
		s, base := testService(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "10"})
		z := &Zone{Owner: store.Owner{Kind: "user", ID: "racer"}}
		dir := filepath.Join(base, "users", "racer", "Storage", "data")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		var ok atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := s.reserve(context.Background(), z, 6<<20, Amount{Bytes: 6 << 20, Files: 1}, 0)
				if err != nil {
					return
				}
				ok.Add(1)
				// The write itself, then its settlement, as writeFile does.
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), make([]byte, 6<<20), 0o600); err != nil {
					t.Error(err)
				}
				r.Settle(context.Background(), Amount{Bytes: 6 << 20, Files: 1})
			}()
		}
		wg.Wait()
		used, err := s.db.Usage(context.Background(), z.Owner)
		if err != nil {
			t.Fatal(err)
		}
		if ok.Load() != 1 || used != (Amount{Bytes: 6 << 20, Files: 1}) {
			t.Fatalf("round %d: %d reservations succeeded, usage %d", round, ok.Load(), used)
		}
	}
}

// TestReconcileWaitsForWritesInFlight: a measurement of the disk while a write is between
// its reservation and its settlement would erase that write from the count; Reconcile waits
// until the write is settled, then sees it on disk.
func TestReconcileWaitsForWritesInFlight(t *testing.T) {
	t.Parallel()
	s, base := testService(t, nil)
	ctx := context.Background()
	z := &Zone{Owner: store.Owner{Kind: "user", ID: "writer"}}
	r, err := s.reserve(ctx, z, 1000, Amount{Bytes: 1000, Files: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Amount, 1)
	go func() {
		n, _, err := s.Reconcile(ctx, z.Owner)
		if err != nil {
			t.Error(err)
		}
		done <- n
	}()
	select {
	case <-done:
		t.Fatal("Reconcile measured while a write was in flight")
	case <-time.After(100 * time.Millisecond):
	}
	dir := filepath.Join(base, "users", "writer", "Storage", "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x"), make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	r.Settle(ctx, Amount{Bytes: 1000, Files: 1})
	if n := <-done; n != (Amount{Bytes: 1000, Files: 1}) {
		t.Fatalf("measured %+v", n)
	}
	if used, _ := s.db.Usage(ctx, z.Owner); used != (Amount{Bytes: 1000, Files: 1}) {
		t.Fatalf("usage %+v, want 1000 bytes in 1 file", used)
	}
}
