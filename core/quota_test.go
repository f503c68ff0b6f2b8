package core

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fileshed/fileshed/core/store"
)

// TestFirstReservationsCannotOvershoot: the first reservations of an owner in a process race
// its first-use measurement; a measurement written after a reservation would erase it, and
// two 6 MB writes would then both fit a 10 MB quota. Many fresh services, 8 racers each.
func TestFirstReservationsCannotOvershoot(t *testing.T) {
	for round := range 40 {
		s, _ := testService(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "10"})
		z := &Zone{Owner: store.Owner{Kind: "user", ID: "racer"}}
		var ok atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.reserve(context.Background(), z, 6<<20, 6<<20); err == nil {
					ok.Add(1)
				}
			}()
		}
		wg.Wait()
		used, err := s.db.Usage(context.Background(), z.Owner)
		if err != nil {
			t.Fatal(err)
		}
		if ok.Load() != 1 || used != 6<<20 {
			t.Fatalf("round %d: %d reservations succeeded, usage %d", round, ok.Load(), used)
		}
	}
}
