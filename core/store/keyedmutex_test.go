package store

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// entries returns how many keys the Locker currently tracks.
func entries(l Locker) int {
	k := l.(*keyedMutex)
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.entries)
}

func TestKeyedMutexExcludesPerKey(t *testing.T) {
	l := NewKeyedMutex()
	const workers, rounds = 20, 200
	keys := []string{"repo:users/alice/Documents", "repo:groups/team", ""}
	inside := make([]atomic.Int32, len(keys))
	counts := make([]int, len(keys)) // unsynchronised on purpose: the race detector checks the mutex
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				i := (w + r) % len(keys)
				unlock := l.Lock(keys[i])
				if n := inside[i].Add(1); n != 1 {
					t.Errorf("%d holders of key %q at once", n, keys[i])
				}
				counts[i]++
				inside[i].Add(-1)
				unlock()
			}
		})
	}
	wg.Wait()
	total := 0
	for _, c := range counts {
		total += c
	}
	if total != workers*rounds {
		t.Errorf("%d critical sections ran, want %d", total, workers*rounds)
	}
	if n := entries(l); n != 0 {
		t.Errorf("%d entries left after use, want 0", n)
	}
}

func TestKeyedMutexKeysAreIndependent(t *testing.T) {
	l := NewKeyedMutex()
	unlockA := l.Lock("a")
	done := make(chan struct{})
	go func() {
		l.Lock("b")()
		l.Lock("A")() // keys are exact strings
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("locking other keys blocked behind a held key")
	}

	blocked := make(chan struct{})
	go func() {
		l.Lock("a")()
		close(blocked)
	}()
	select {
	case <-blocked:
		t.Fatal("second holder of the same key got in")
	case <-time.After(50 * time.Millisecond):
	}
	if n := entries(l); n != 1 {
		t.Errorf("%d entries while one key is held and awaited, want 1", n)
	}
	unlockA()
	<-blocked
	if n := entries(l); n != 0 {
		t.Errorf("%d entries left after use, want 0", n)
	}
}

func TestKeyedMutexDoubleUnlockIsHarmless(t *testing.T) {
	l := NewKeyedMutex()
	unlock := l.Lock("k")
	unlock()
	unlock() // must neither panic nor release somebody else's hold
	unlock2 := l.Lock("k")
	got := make(chan struct{})
	go func() {
		l.Lock("k")()
		close(got)
	}()
	unlock() // the stale first unlock again, while the second holder holds k
	select {
	case <-got:
		t.Fatal("a stale unlock released the current holder")
	case <-time.After(50 * time.Millisecond):
	}
	unlock2()
	<-got
	if n := entries(l); n != 0 {
		t.Errorf("%d entries left after use, want 0", n)
	}
}
