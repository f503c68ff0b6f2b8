package owui

import (
	"container/list"
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"
)

// defaultMaxEntries bounds the Verifier cache: about 10k users' tokens,
// roughly 2 MB, whatever tokens clients send.
const defaultMaxEntries = 10_000

// Verifier checks tokens with Client.Me and caches successes for a fixed
// ttl. Why the cache is keyed by SHA-256(token): a memory dump or a debug
// print of the map must never reveal a usable credential. Concurrent checks
// of the same token share one upstream call. Failures are never cached, so a
// refused or unverifiable token is asked again next time. It is safe for
// concurrent use.
type Verifier struct {
	client *Client
	ttl    time.Duration
	max    int

	mu       sync.Mutex
	entries  map[[32]byte]*list.Element // value: *cacheEntry
	order    *list.List                 // oldest first; one ttl, so also soonest-expiring first
	inflight map[[32]byte]*pending
}

type cacheEntry struct {
	key     [32]byte
	user    User
	expires time.Time
}

// pending is one upstream check shared by every caller of the same token.
type pending struct {
	done chan struct{}
	user User
	err  error
}

// NewVerifier returns a Verifier that trusts a successful check for ttl.
// A non-positive ttl disables caching but still coalesces concurrent checks.
func NewVerifier(c *Client, ttl time.Duration) *Verifier {
	return &Verifier{
		client:   c,
		ttl:      ttl,
		max:      defaultMaxEntries,
		entries:  map[[32]byte]*list.Element{},
		order:    list.New(),
		inflight: map[[32]byte]*pending{},
	}
}

// Verify returns the user token belongs to, from the cache or from Open
// WebUI. Errors are those of Client.Me; if ctx ends first, Verify returns
// ErrUnavailable wrapping ctx's error while the shared check carries on.
func (v *Verifier) Verify(ctx context.Context, token string) (User, error) {
	if err := checkToken(token); err != nil {
		return User{}, err
	}
	key := sha256.Sum256([]byte(token))
	v.mu.Lock()
	if u, ok := v.lookup(key, time.Now()); ok {
		v.mu.Unlock()
		return u, nil
	}
	p, ok := v.inflight[key]
	if !ok {
		p = &pending{done: make(chan struct{})}
		v.inflight[key] = p
		// Detached from this caller's cancellation so that one impatient
		// caller does not fail the others; Client's timeout bounds it.
		go v.check(context.WithoutCancel(ctx), key, token, p)
	}
	v.mu.Unlock()
	select {
	case <-p.done:
		return p.user, p.err
	case <-ctx.Done():
		return User{}, fmt.Errorf("%w: token check: %w", ErrUnavailable, ctx.Err())
	}
}

// check asks Open WebUI once and publishes the result to every waiter. The
// cache is filled before the pending entry goes, so a later caller either
// joins this check or hits the cache: never a second upstream call.
func (v *Verifier) check(ctx context.Context, key [32]byte, token string, p *pending) {
	u, err := v.client.Me(ctx, token)
	v.mu.Lock()
	if err == nil {
		v.store(key, u, time.Now())
	}
	delete(v.inflight, key)
	p.user, p.err = u, err
	v.mu.Unlock()
	close(p.done)
}

// lookup returns a live cached user, dropping the entry if it has expired.
// v.mu must be held.
func (v *Verifier) lookup(key [32]byte, now time.Time) (User, bool) {
	el, ok := v.entries[key]
	if !ok {
		return User{}, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expires) {
		v.remove(el)
		return User{}, false
	}
	return e.user, true
}

// store caches u under key, first dropping expired entries, then the oldest
// ones while the cache is full. v.mu must be held.
func (v *Verifier) store(key [32]byte, u User, now time.Time) {
	if v.ttl <= 0 {
		return
	}
	if el, ok := v.entries[key]; ok {
		v.remove(el)
	}
	for el := v.order.Front(); el != nil; el = v.order.Front() {
		expired := !now.Before(el.Value.(*cacheEntry).expires)
		if !expired && v.order.Len() < v.max {
			break
		}
		v.remove(el)
	}
	v.entries[key] = v.order.PushBack(&cacheEntry{key: key, user: u, expires: now.Add(v.ttl)})
}

func (v *Verifier) remove(el *list.Element) {
	delete(v.entries, el.Value.(*cacheEntry).key)
	v.order.Remove(el)
}
