package core

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"testing"
)

// TestStorageLockReleasedBesideForks: a storage lock released while the process starts
// commands must be free at once. The flock belongs to the open file description, which a
// child shares from its fork until its exec; closing the file alone left the lock held
// through that window, and the next operator command on the storage answered "a fileshed
// server is running" (TestImportForceKilledMidSwap failed so in a full run). Released
// explicitly, the lock is free whatever children exist.
func TestStorageLockReleasedBesideForks(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 4 { // children forking all along, as parallel tests and a server's commands do
		wg.Go(func() {
			for ctx.Err() == nil {
				_ = exec.Command("true").Run()
			}
		})
	}
	defer func() { stop(); wg.Wait() }()
	for i := range 300 {
		l, err := lockStorage(base, holderOperator)
		if err != nil {
			if errors.Is(err, ErrServerRunning) {
				t.Fatalf("attempt %d: the lock released just before is still held: %v", i, err)
			}
			t.Fatal(err)
		}
		l.Close()
	}
}
