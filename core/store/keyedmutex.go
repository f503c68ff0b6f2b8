package store

import "sync"

// Locker provides cross-request mutual exclusion by key (a repository, an owner's quota, a
// lock row). Lock blocks until the key is free and returns the function that frees it.
// The SQLite deployment uses an in-process implementation; a PostgreSQL one will use
// advisory locks so that several replicas exclude each other (DESIGN §9).
type Locker interface {
	Lock(key string) (unlock func())
}

// keyedMutex is a sync.Mutex per key, created on first use and freed when its last user
// unlocks, so the map holds only keys somebody is holding or waiting for.
type keyedMutex struct {
	mu      sync.Mutex
	entries map[string]*keyedEntry
}

// keyedEntry is one key's mutex and the number of goroutines holding or waiting for it.
type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

// NewKeyedMutex returns an in-process Locker: a sync.Mutex per key, with reference counting
// so entries are freed when unused.
func NewKeyedMutex() Locker {
	return &keyedMutex{entries: map[string]*keyedEntry{}}
}

// Lock implements Locker. The returned unlock may be called more than once; only the first
// call releases.
func (k *keyedMutex) Lock(key string) (unlock func()) {
	k.mu.Lock()
	e := k.entries[key]
	if e == nil {
		e = &keyedEntry{}
		k.entries[key] = e
	}
	e.refs++ // counted before blocking, so the entry cannot be freed under a waiter
	k.mu.Unlock()

	e.mu.Lock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Unlock()
			k.mu.Lock()
			e.refs--
			if e.refs == 0 {
				delete(k.entries, key)
			}
			k.mu.Unlock()
		})
	}
}
