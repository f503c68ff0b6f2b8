// Package locktest is the conformance suite of a lock.Locker: what every implementation (the
// in-process one, the database-backed one) must guarantee, run by each one's tests.
package locktest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/lock"
)

// Run checks l against the guarantees of lock.Locker. Each Locker returned by newLocker
// must share its locks with the others it returns (two replicas of one deployment); an
// in-process Locker returns itself. waiting reports how many requests of a key wait (not
// granted yet) across those Lockers: the suite awaits a request's wait by it rather than
// assuming it after a pause, which a loaded machine can outlast.
func Run(t *testing.T, newLocker func(t *testing.T) lock.Locker, waiting func(t *testing.T, k lock.Key) int) {
	t.Run("exclusive excludes", func(t *testing.T) { exclusive(t, newLocker(t), newLocker(t)) })
	t.Run("shared together", func(t *testing.T) { shared(t, newLocker(t), newLocker(t)) })
	t.Run("writer not starved", func(t *testing.T) { writerFirst(t, newLocker(t), waiting) })
	t.Run("wait ends with context", func(t *testing.T) { deadline(t, newLocker(t), newLocker(t), waiting) })
	t.Run("keys are independent", func(t *testing.T) { independent(t, newLocker(t)) })
	t.Run("invalid keys", func(t *testing.T) { invalid(t, newLocker(t)) })
	t.Run("unlock twice", func(t *testing.T) { twice(t, newLocker(t)) })
}

// awaitWaiting returns once n requests of k wait (failing t after 10 s).
func awaitWaiting(t *testing.T, waiting func(t *testing.T, k lock.Key) int, k lock.Key, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); waiting(t, k) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%q: %d requests waiting after 10 s, want %d", k, waiting(t, k), n)
		}
	}
}

func must(t *testing.T, l lock.Locker, k lock.Key, m lock.Mode) lock.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	le, err := l.Lock(ctx, k, m)
	if err != nil {
		t.Fatalf("lock %q %v: %v", k, m, err)
	}
	return le
}

// exclusive: 8 goroutines on two Lockers increment a counter under one exclusive key,
// reading and writing it non-atomically: no increment is lost and no two holders overlap.
func exclusive(t *testing.T, a, b lock.Locker) {
	k := lock.NewKey("test", "exclusive")
	var inside, overlaps atomic.Int32
	counter := 0
	var wg sync.WaitGroup
	for i := range 8 {
		l := a
		if i%2 == 1 {
			l = b
		}
		wg.Go(func() {
			for range 50 {
				le := must(t, l, k, lock.Exclusive)
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				c := counter
				time.Sleep(10 * time.Microsecond)
				counter = c + 1
				inside.Add(-1)
				le.Unlock()
			}
		})
	}
	wg.Wait()
	if counter != 400 || overlaps.Load() != 0 {
		t.Fatalf("counter %d (want 400), %d overlaps", counter, overlaps.Load())
	}
}

// shared: shared holders hold at once; an exclusive request waits for all of them.
func shared(t *testing.T, a, b lock.Locker) {
	k := lock.NewKey("test", "shared")
	r1 := must(t, a, k, lock.Shared)
	r2 := must(t, b, k, lock.Shared)
	got := make(chan lock.Lease)
	go func() {
		le, err := a.Lock(context.Background(), k, lock.Exclusive)
		if err != nil {
			t.Error(err)
		}
		got <- le
	}()
	select {
	case <-got:
		t.Fatal("exclusive granted while shared holders hold")
	case <-time.After(100 * time.Millisecond):
	}
	r1.Unlock()
	select {
	case <-got:
		t.Fatal("exclusive granted while a shared holder holds")
	case <-time.After(100 * time.Millisecond):
	}
	r2.Unlock()
	select {
	case le := <-got:
		le.Unlock()
	case <-time.After(10 * time.Second):
		t.Fatal("exclusive never granted after the shared holders left")
	}
}

// writerFirst: once a writer waits, new shared requests wait behind it.
func writerFirst(t *testing.T, l lock.Locker, waiting func(t *testing.T, k lock.Key) int) {
	k := lock.NewKey("test", "writer-first")
	r := must(t, l, k, lock.Shared)
	w := make(chan lock.Lease)
	go func() { le, _ := l.Lock(context.Background(), k, lock.Exclusive); w <- le }()
	awaitWaiting(t, waiting, k, 1) // the writer waits now
	late := make(chan lock.Lease)
	go func() { le, _ := l.Lock(context.Background(), k, lock.Shared); late <- le }()
	select {
	case <-late:
		t.Fatal("a new reader overtook the waiting writer")
	case <-time.After(100 * time.Millisecond):
	}
	r.Unlock()
	wl := <-w
	select {
	case <-late:
		t.Fatal("a reader got in beside the writer")
	case <-time.After(50 * time.Millisecond):
	}
	wl.Unlock()
	(<-late).Unlock()
}

// deadline: a wait ends with its context, with the context's error, holding nothing; a
// cancelled writer lets the readers it held back in.
func deadline(t *testing.T, a, b lock.Locker, waiting func(t *testing.T, k lock.Key) int) {
	k := lock.NewKey("test", "deadline")
	held := must(t, a, k, lock.Exclusive)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := b.Lock(ctx, k, lock.Exclusive); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait past the deadline: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the wait ended %v after a 150 ms deadline", d)
	}
	held.Unlock()
	// A waiting writer that gives up lets a reader in.
	r := must(t, a, k, lock.Shared)
	wctx, wcancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := b.Lock(wctx, k, lock.Exclusive); done <- err }()
	awaitWaiting(t, waiting, k, 1)
	wcancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled writer: %v", err)
	}
	r2 := must(t, b, k, lock.Shared)
	r.Unlock()
	r2.Unlock()
	must(t, b, k, lock.Exclusive).Unlock()
}

// independent: different keys never wait for each other, whatever the mode.
func independent(t *testing.T, l lock.Locker) {
	a := must(t, l, lock.NewKey("test", "a"), lock.Exclusive)
	defer a.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, k := range []lock.Key{lock.NewKey("test", "b"), lock.NewKey("other", "a"), lock.NewKey("test", "a", "x")} {
		le, err := l.Lock(ctx, k, lock.Exclusive)
		if err != nil {
			t.Fatalf("%q waited for another key: %v", k, err)
		}
		le.Unlock()
	}
}

// invalid: a key with a NUL byte or no kind is refused at once.
func invalid(t *testing.T, l lock.Locker) {
	for _, k := range []lock.Key{lock.NewKey("test", "a\x00b"), lock.NewKey("", "x"), ""} {
		if _, err := l.Lock(context.Background(), k, lock.Exclusive); !errors.Is(err, lock.ErrInvalidKey) {
			t.Errorf("%q: %v", k, err)
		}
	}
}

// twice: a second Unlock does not release someone else's hold.
func twice(t *testing.T, l lock.Locker) {
	k := lock.NewKey("test", "twice")
	a := must(t, l, k, lock.Shared)
	a.Unlock()
	b := must(t, l, k, lock.Shared)
	a.Unlock() // must not release b's hold
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if le, err := l.Lock(ctx, k, lock.Exclusive); err == nil {
		le.Unlock()
		t.Fatal("a second Unlock released another holder's lock")
	}
	b.Unlock()
}
