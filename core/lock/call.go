package lock

import (
	"context"
	"sync/atomic"
)

// Call is one call (a tool request) as a Locker sees it: it counts the leases the call
// holds. A Locker whose leases each pin one session of a bounded pool (the PostgreSQL one)
// admits calls, not leases: a call that holds nothing waits for room in the pool, a call
// that already holds a lease takes its next one at once. Why: calls take their keys one
// after the other; if every session were held by calls waiting for one more, none would
// ever finish (a pool deadlock). The in-process Locker ignores it.
type Call struct{ held atomic.Int64 }

type callKey struct{}

// WithCall marks ctx as one call (the edge does it once per request).
func WithCall(ctx context.Context) context.Context {
	return context.WithValue(ctx, callKey{}, new(Call))
}

// CallOf is the call ctx belongs to, nil when nobody marked one (then every lease is a
// call of its own).
func CallOf(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// Holds reports whether the call holds a lease now (false for a nil Call).
func (c *Call) Holds() bool { return c != nil && c.held.Load() > 0 }

// Add records delta leases taken (1) or released (-1) by the call; a nil Call ignores it.
func (c *Call) Add(delta int64) {
	if c != nil {
		c.held.Add(delta)
	}
}
