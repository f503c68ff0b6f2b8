package pglock

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/fileshed/fileshed/core/lock"
)

// Defaults and bounds of the pool and of its checks.
const (
	// DefaultConns is Options.Conns when 0.
	DefaultConns = 32
	// defaultCheck is Options.Check when 0.
	defaultCheck = time.Second
	// pingTimeout bounds one liveness check of a held lease's connection; cancelGrace is
	// how long a connection whose context ended may take to answer the cancel request
	// before it is cut.
	pingTimeout = 5 * time.Second
	cancelGrace = 2 * time.Second
	// releaseTimeout bounds the statement that releases a lease (or cleans up after a
	// cancelled wait); past it the connection is closed instead.
	releaseTimeout = 5 * time.Second
	// connIdle closes a pooled connection unused for this long (a failover or a new
	// address of the database is then followed).
	connIdle = 2 * time.Minute
)

// sessionParams are set on every lock connection. client_connection_check_interval ends a
// wait whose client is gone (a replica killed while waiting); the keepalives end, within
// about 30 s, the session of a replica that vanished from the network, which is well after
// that replica saw its own leases lost (Check + pingTimeout + cancelGrace). They are all
// per-session settings (PostgreSQL 14 or newer).
var sessionParams = map[string]string{
	"client_connection_check_interval": "2000",
	"tcp_keepalives_idle":              "15",
	"tcp_keepalives_interval":          "5",
	"tcp_keepalives_count":             "3",
}

// Options tunes a Locker.
type Options struct {
	// Conns is how many connections the calls holding nothing may fill before they wait
	// (0 = DefaultConns); a call holding a lease takes its next one even past it.
	Conns int
	// Check is the interval of the liveness check of a held lease (0 = 1 s).
	Check time.Duration
}

// Stats is a Locker's state, for the metrics.
type Stats struct {
	// InUse and Idle are the connections holding a lease (or waiting for one) and the
	// pooled ones.
	InUse, Idle int
	// Lost counts the leases whose connection failed while held.
	Lost int64
}

// Locker is the PostgreSQL lock.Locker. It is safe for concurrent use; Close it at the end.
type Locker struct {
	cfg   *pgx.ConnConfig
	conns int
	check time.Duration

	mu     sync.Mutex
	idle   []idleConn
	inUse  int
	wake   chan struct{} // closed and replaced whenever a connection is given back
	closed bool

	lost atomic.Int64
}

// idleConn is a pooled connection and when it was given back.
type idleConn struct {
	c     *pgx.Conn
	since time.Time
}

// Open returns the Locker of the PostgreSQL database at url (the state database) and
// checks that it answers, within ctx.
func Open(ctx context.Context, url string, opt Options) (*Locker, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// Why not the parser's message: it quotes the URL, which may carry the password.
		return nil, errors.New("pglock: state.url is not a PostgreSQL URL")
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "fileshed-locks" // names the lock sessions in pg_stat_activity
	}
	for k, v := range sessionParams {
		cfg.RuntimeParams[k] = v
	}
	// Why a cancel request: pgx's default, when a context ends, closes the connection and
	// cancels the statement in the background, so the server may still queue the wait
	// (holding back the requests behind it) after Lock returned, and every cancelled wait
	// costs a connection; with the cancel request the wait has ended on the server before
	// Lock returns, and cleanUp keeps the connection.
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: cancelGrace}
	}
	l := &Locker{cfg: cfg, conns: opt.Conns, check: opt.Check, wake: make(chan struct{})}
	if l.conns <= 0 {
		l.conns = DefaultConns
	}
	if l.check <= 0 {
		l.check = defaultCheck
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pglock: connect to the state database: %w", err)
	}
	l.idle = append(l.idle, idleConn{c, time.Now()})
	return l, nil
}

// keyID is the advisory lock id of k (package doc).
func keyID(k lock.Key) int64 {
	sum := sha256.Sum256([]byte("fileshed:" + string(k)))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// lockSQL and unlockSQL take and release a lease of each mode.
var (
	lockSQL   = map[lock.Mode]string{lock.Shared: "SELECT pg_advisory_lock_shared($1)", lock.Exclusive: "SELECT pg_advisory_lock($1)"}
	unlockSQL = map[lock.Mode]string{lock.Shared: "SELECT pg_advisory_unlock_shared($1)", lock.Exclusive: "SELECT pg_advisory_unlock($1)"}
)

// Lock implements lock.Locker.
func (l *Locker) Lock(ctx context.Context, k lock.Key, m lock.Mode) (lock.Lease, error) {
	if err := k.Valid(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	call := lock.CallOf(ctx)
	id := keyID(k)
	for {
		c, pooled, err := l.take(ctx, call.Holds())
		if err != nil {
			return nil, err
		}
		_, err = c.Exec(ctx, lockSQL[m], id)
		if err == nil {
			call.Add(1)
			le := &lease{l: l, c: c, id: id, m: m, call: call, lost: make(chan struct{}), done: make(chan struct{})}
			go le.watch()
			return le, nil
		}
		if ctx.Err() != nil {
			l.give(c, cleanUp(c))
			return nil, ctx.Err()
		}
		dead := c.IsClosed()
		l.give(c, false)
		if pooled && dead {
			// A pooled connection that died while idle (after a database restart, all of
			// them): again, on the next one or a new one; each dead one leaves the pool.
			continue
		}
		return nil, fmt.Errorf("pglock: lock %s: %w", k.Kind(), err)
	}
}

// cleanUp runs after a wait its context ended: the server stopped waiting (the cancel
// request), but the lock may have been granted in the same instant, and a session-level
// advisory lock outlives the failed statement. The session holds nothing else (one lease
// per connection), so releasing all of its advisory locks is exact. It reports whether the
// connection may be pooled again.
func cleanUp(c *pgx.Conn) bool {
	if c.IsClosed() {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	_, err := c.Exec(ctx, "SELECT pg_advisory_unlock_all()")
	return err == nil
}

// take returns a connection for one lease: a pooled one (pooled true) or a new one. A call
// that holds nothing (admitted false) first waits, within ctx, until fewer than Conns are
// in use.
func (l *Locker) take(ctx context.Context, admitted bool) (c *pgx.Conn, pooled bool, err error) {
	l.mu.Lock()
	for !admitted && l.inUse >= l.conns && !l.closed {
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		l.mu.Lock()
	}
	if l.closed {
		l.mu.Unlock()
		return nil, false, errors.New("pglock: the locker is closed")
	}
	l.inUse++
	var stale []*pgx.Conn
	for len(l.idle) > 0 && c == nil {
		ic := l.idle[len(l.idle)-1]
		l.idle = l.idle[:len(l.idle)-1]
		if time.Since(ic.since) > connIdle {
			stale = append(stale, ic.c)
			continue
		}
		c, pooled = ic.c, true
	}
	l.mu.Unlock()
	for _, s := range stale {
		closeConn(s)
	}
	if c != nil {
		return c, true, nil
	}
	if c, err = pgx.ConnectConfig(ctx, l.cfg); err != nil {
		l.give(nil, false)
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, fmt.Errorf("pglock: connect to the state database: %w", err)
	}
	return c, false, nil
}

// give returns a connection taken by take: pooled again when keep (and the pool is not
// full), else closed, which ends its session and whatever that session still held.
func (l *Locker) give(c *pgx.Conn, keep bool) {
	l.mu.Lock()
	l.inUse--
	keep = keep && c != nil && !l.closed && len(l.idle) < l.conns
	if keep {
		l.idle = append(l.idle, idleConn{c, time.Now()})
	}
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
	if !keep && c != nil {
		closeConn(c)
	}
}

// closeConn closes c, bounded.
func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	_ = c.Close(ctx)
}

// Stats reports the pool and the leases lost so far.
func (l *Locker) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{InUse: l.inUse, Idle: len(l.idle), Lost: l.lost.Load()}
}

// Close closes the pooled connections; leases still held keep theirs until Unlock, which
// then closes it.
func (l *Locker) Close() error {
	l.mu.Lock()
	idle := l.idle
	l.idle, l.closed = nil, true
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
	for _, ic := range idle {
		closeConn(ic.c)
	}
	return nil
}
