package lock_test

import (
	"testing"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/lock/locktest"
)

func TestLocal(t *testing.T) {
	l := lock.NewLocal()
	locktest.Run(t, func(*testing.T) lock.Locker { return l }, func(_ *testing.T, k lock.Key) int { return lock.Waiting(l, k) })
}

// TestLocalForgetsIdleKeys: the map holds only keys somebody holds or waits for.
func TestLocalForgetsIdleKeys(t *testing.T) {
	l := lock.NewLocal()
	for i := range 100 {
		le, err := l.Lock(t.Context(), lock.NewKey("k", string(rune('a'+i%26))), lock.Mode(i%2))
		if err != nil {
			t.Fatal(err)
		}
		le.Unlock()
	}
	if n := lock.Keys(l); n != 0 {
		t.Fatalf("%d idle keys kept", n)
	}
}
