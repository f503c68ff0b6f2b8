package lock

import (
	"context"
	"errors"
	"strings"
)

// Mode is how a key is held: many Shared holders at once, or one Exclusive holder.
type Mode int

// The modes of a lock.
const (
	Shared Mode = iota
	Exclusive
)

func (m Mode) String() string {
	if m == Exclusive {
		return "exclusive"
	}
	return "shared"
}

// Key names what a lock protects, logically: a kind and the parts that name the thing
// ("file", "user:alice:documents", "notes/a.md"), never a host path, so that replicas
// mounting the storage at different places agree on it. Build keys with NewKey.
type Key string

// ErrInvalidKey refuses a key with a NUL byte or no kind: a database-backed Locker could not
// store it, and two different keys must never collide after sanitising.
var ErrInvalidKey = errors.New("lock: invalid key")

// sep separates the parts of a key: a byte no part may hold (paths and ids are validated
// to hold no control character long before they reach a lock).
const sep = "\x1f"

// NewKey joins kind and parts into a Key.
func NewKey(kind string, parts ...string) Key {
	return Key(kind + sep + strings.Join(parts, sep))
}

// Kind is the kind the key was made with (its first part).
func (k Key) Kind() string {
	kind, _, _ := strings.Cut(string(k), sep)
	return kind
}

// Valid reports whether k can be locked: it has a kind and no NUL byte. (A separator
// inside a part is not detected: parts are ids and paths validated to hold no control
// character before they reach a lock.)
func (k Key) Valid() error {
	if k.Kind() == "" || strings.IndexByte(string(k), 0) >= 0 {
		return ErrInvalidKey
	}
	return nil
}

// Lease is a held lock. Unlock releases it (more calls do nothing). Lost is closed when the
// lock can no longer be trusted — the database session that held it died — so a holder
// about to make its change visible (a rename, a commit) checks it first; it is nil (never
// closed) for a Locker whose locks cannot be lost.
type Lease interface {
	Unlock()
	Lost() <-chan struct{}
}

// Locker grants leases on keys. Lock waits until the key can be held in mode or ctx ends
// (then ctx's error, errors.Is context.DeadlineExceeded or Canceled). A Locker does not
// detect deadlocks: its users take keys in one global order (the kernel's lock order).
type Locker interface {
	Lock(ctx context.Context, k Key, m Mode) (Lease, error)
}

// Held reports whether l is still trustworthy (its Lost channel not closed).
func Held(l Lease) bool {
	select {
	case <-l.Lost():
		return false
	default:
		return true
	}
}
