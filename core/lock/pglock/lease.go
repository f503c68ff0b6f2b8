package pglock

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fileshed/fileshed/core/lock"
)

// lease is one held advisory lock on its pinned connection.
type lease struct {
	l    *Locker
	c    *pgx.Conn
	id   int64
	m    lock.Mode
	call *lock.Call
	// mu hands the connection to one user at a time: the liveness check or Unlock.
	mu sync.Mutex
	// lost is closed when the connection failed while held; done when Unlock began.
	lost, done chan struct{}
	once       sync.Once
}

// Lost implements lock.Lease.
func (le *lease) Lost() <-chan struct{} { return le.lost }

// Unlock implements lock.Lease: the lock is released on its connection, which goes back
// to the pool; when the release fails or the lease was lost the connection is closed,
// which ends the session and releases everything it held.
func (le *lease) Unlock() {
	le.once.Do(func() {
		close(le.done)
		le.mu.Lock()
		defer le.mu.Unlock()
		le.call.Add(-1)
		released := false
		if lock.Held(le) {
			ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
			err := le.c.QueryRow(ctx, unlockSQL[le.m], le.id).Scan(&released)
			cancel()
			released = err == nil && released
		}
		le.l.give(le.c, released)
	})
}

// watch checks the connection of a held lease every Check until Unlock, and closes lost
// at the first failure.
func (le *lease) watch() {
	t := time.NewTimer(le.l.check)
	defer t.Stop()
	for {
		select {
		case <-le.done:
			return
		case <-t.C:
		}
		le.mu.Lock()
		select {
		case <-le.done:
			le.mu.Unlock()
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
		err := le.c.Ping(ctx)
		cancel()
		if err != nil {
			close(le.lost)
			le.l.lost.Add(1)
		}
		le.mu.Unlock()
		if err != nil {
			return
		}
		t.Reset(le.l.check)
	}
}
