package lock

import (
	"context"
	"sync"
)

// local is the in-process Locker: a read-write lock per key, created on first use and
// forgotten when nobody holds or waits for it, whose waits end with their context. A writer
// waiting keeps new readers out (as sync.RWMutex does), so a steady flow of shared holders
// cannot starve it.
type local struct {
	mu   sync.Mutex
	keys map[Key]*entry
}

// entry is one key's state; every field is guarded by local.mu.
type entry struct {
	readers int
	writer  bool
	// writers counts the exclusive holders waiting; refs everyone holding or waiting.
	writers, refs int
	// wake is closed (and replaced) at every release: a broadcast to the waiters.
	wake chan struct{}
}

// NewLocal returns the in-process Locker of one server (SQLite state).
func NewLocal() Locker { return &local{keys: map[Key]*entry{}} }

// Lock implements Locker.
func (l *local) Lock(ctx context.Context, k Key, m Mode) (Lease, error) {
	if err := k.Valid(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	e := l.keys[k]
	if e == nil {
		e = &entry{wake: make(chan struct{})}
		l.keys[k] = e
	}
	e.refs++
	if m == Exclusive {
		e.writers++
	}
	for {
		if m == Exclusive && !e.writer && e.readers == 0 {
			e.writer = true
			e.writers--
			break
		}
		if m == Shared && !e.writer && e.writers == 0 {
			e.readers++
			break
		}
		wake := e.wake
		l.mu.Unlock()
		select {
		case <-wake:
			l.mu.Lock()
		case <-ctx.Done():
			l.mu.Lock()
			if m == Exclusive {
				e.writers--
				e.broadcast() // readers held back by this writer may go on
			}
			l.forget(k, e)
			l.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	l.mu.Unlock()
	return &localLease{l: l, k: k, e: e, m: m}, nil
}

// broadcast wakes every waiter of e (l.mu held).
func (e *entry) broadcast() {
	close(e.wake)
	e.wake = make(chan struct{})
}

// forget drops one reference to e, and e itself when nobody holds or waits (l.mu held).
func (l *local) forget(k Key, e *entry) {
	if e.refs--; e.refs == 0 {
		delete(l.keys, k)
	}
}

// localLease is a lease of local: never lost.
type localLease struct {
	l    *local
	k    Key
	e    *entry
	m    Mode
	once sync.Once
}

func (r *localLease) Unlock() {
	r.once.Do(func() {
		r.l.mu.Lock()
		defer r.l.mu.Unlock()
		if r.m == Exclusive {
			r.e.writer = false
		} else {
			r.e.readers--
		}
		r.e.broadcast()
		r.l.forget(r.k, r.e)
	})
}

func (r *localLease) Lost() <-chan struct{} { return nil }
