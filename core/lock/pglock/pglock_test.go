package pglock

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/lock/locktest"
	"github.com/fileshed/fileshed/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// open returns a Locker on url, closed when t ends.
func open(t testing.TB, url string, opt Options) *Locker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := Open(ctx, url, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// admin is a plain connection to the database of url, to look at the server's locks.
func admin(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// advisory counts the advisory locks of id on the server, granted and waiting.
func advisory(t *testing.T, db *sql.DB, id int64) (granted, waiting int) {
	t.Helper()
	// The one-key form keeps the id's high half in classid, its low half in objid.
	err := db.QueryRow(`SELECT count(*) FILTER (WHERE granted), count(*) FILTER (WHERE NOT granted)
		FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid::bigint = ($1::bigint >> 32) & 4294967295 AND objid::bigint = $1::bigint & 4294967295`, id).Scan(&granted, &waiting)
	if err != nil {
		t.Fatal(err)
	}
	return granted, waiting
}

// endLockSessions terminates the lock sessions on db's database (what a database restart
// does to them; other tests' databases on the server are left alone) and waits until their
// backends are gone.
func endLockSessions(t *testing.T, db *sql.DB) {
	t.Helper()
	const sessions = `FROM pg_stat_activity WHERE application_name = 'fileshed-locks' AND datname = current_database()`
	if _, err := db.Exec(`SELECT pg_terminate_backend(pid) ` + sessions); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var n int
		if err := db.QueryRow(`SELECT count(*) ` + sessions).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d lock sessions still there 10 s after they were terminated", n)
		}
	}
}

// TestConformance runs the Locker suite with every Locker a replica of its own (its own
// pool) on one database: the guarantees hold across replicas.
func TestConformance(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	db := admin(t, url)
	locktest.Run(t, func(t *testing.T) lock.Locker { return open(t, url, Options{}) },
		func(t *testing.T, k lock.Key) int { _, waiting := advisory(t, db, keyID(k)); return waiting })
}

// TestCancelledWaitLeavesNothingOnTheServer: when Lock returns at its deadline the server
// holds no waiter of it (a waiting exclusive request would hold back every shared one behind
// it) and no lock, and the connection is still pooled; the next requester gets the key at
// once.
func TestCancelledWaitLeavesNothingOnTheServer(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	a, b, db := open(t, url, Options{}), open(t, url, Options{}), admin(t, url)
	k := lock.NewKey("test", "cancel")
	held, err := a.Lock(t.Context(), k, lock.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []lock.Mode{lock.Exclusive, lock.Shared} {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		_, err := b.Lock(ctx, k, m)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%v wait past its deadline: %v", m, err)
		}
		if g, w := advisory(t, db, keyID(k)); g != 1 || w != 0 {
			t.Fatalf("after a cancelled %v wait: %d granted, %d waiting (want 1, 0)", m, g, w)
		}
	}
	if st := b.Stats(); st.Idle != 1 || st.InUse != 0 {
		t.Fatalf("b's pool after two cancelled waits: %+v (want its one connection pooled)", st)
	}
	held.Unlock()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	le, err := b.Lock(ctx, k, lock.Exclusive)
	if err != nil {
		t.Fatalf("the key after the holder left: %v", err)
	}
	le.Unlock()
	if st := b.Stats(); st.InUse != 0 {
		t.Fatalf("connections still in use: %+v", st)
	}
}

// TestCancelAtTheGrantLeaksNoLock races a waiter's deadline against the holder's release
// many times: whichever wins, once everyone let go the server holds no lock of the key (a
// lock granted as the cancel arrived is released, not left on a pooled session).
func TestCancelAtTheGrantLeaksNoLock(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	a, b, db := open(t, url, Options{}), open(t, url, Options{}), admin(t, url)
	k := lock.NewKey("test", "race")
	granted := 0
	for i := range 40 {
		held, err := a.Lock(t.Context(), k, lock.Exclusive)
		if err != nil {
			t.Fatal(err)
		}
		d := 50*time.Millisecond + time.Duration(i%8)*time.Millisecond
		time.AfterFunc(d, held.Unlock)
		ctx, cancel := context.WithTimeout(t.Context(), d)
		le, err := b.Lock(ctx, k, lock.Exclusive)
		cancel()
		if err == nil {
			granted++
			le.Unlock()
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			g, w := advisory(t, db, keyID(k))
			if g == 0 && w == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d granted, %d waiting after everyone let go", i, g, w)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Logf("%d of 40 waits got the lock before their deadline", granted)
}

// TestKilledConnectionIsLost: when the session holding a lease is terminated, Lost closes
// within the check interval, another replica can take the key, and Unlock still returns
// the slot.
func TestKilledConnectionIsLost(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	a, b, db := open(t, url, Options{Check: 100 * time.Millisecond}), open(t, url, Options{}), admin(t, url)
	k := lock.NewKey("test", "killed")
	le, err := a.Lock(t.Context(), k, lock.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if !lock.Held(le) {
		t.Fatal("a fresh lease is already lost")
	}
	pid := le.(*lease).c.PgConn().PID()
	var ok bool
	if err := db.QueryRow(`SELECT pg_terminate_backend($1)`, pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminate: %v %v", ok, err)
	}
	select {
	case <-le.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("Lost not closed 10 s after the session was terminated")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	other, err := b.Lock(ctx, k, lock.Exclusive)
	if err != nil {
		t.Fatalf("another replica after the loss: %v", err)
	}
	other.Unlock()
	le.Unlock()
	if st := a.Stats(); st.Lost != 1 || st.InUse != 0 {
		t.Fatalf("stats after the loss: %+v (want Lost 1, InUse 0)", st)
	}
}

// TestDeadPooledConnectionIsReplaced: a pooled connection that died while idle (a database
// restart) costs the next Lock nothing but a new connection.
func TestDeadPooledConnectionIsReplaced(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	l, db := open(t, url, Options{}), admin(t, url)
	endLockSessions(t, db)
	le, err := l.Lock(t.Context(), lock.NewKey("test", "after-restart"), lock.Shared)
	if err != nil {
		t.Fatalf("Lock after the pooled connection died: %v", err)
	}
	le.Unlock()
}

// TestDeadPooledConnectionsAreAllReplaced: after a database restart every pooled connection
// is dead; a Lock that meets several of them in turn still gets its lease on a new one (it
// retried once only, and answered the second dead connection's error).
func TestDeadPooledConnectionsAreAllReplaced(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	l, db := open(t, url, Options{}), admin(t, url)
	var leases []lock.Lease
	for i := range 3 { // three connections in the pool
		le, err := l.Lock(t.Context(), lock.NewKey("test", "pool", string(rune('a'+i))), lock.Exclusive)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, le)
	}
	for _, le := range leases {
		le.Unlock()
	}
	endLockSessions(t, db)
	le, err := l.Lock(t.Context(), lock.NewKey("test", "after-restart"), lock.Shared)
	if err != nil {
		t.Fatalf("Lock after the pooled connections died: %v", err)
	}
	le.Unlock()
}

// TestPoolAdmitsCallsNotLeases: with 2 connections, two calls holding one lease each still
// take their next keys (they would otherwise wait for each other forever), while a third
// call holding nothing waits until a connection is given back.
func TestPoolAdmitsCallsNotLeases(t *testing.T) {
	t.Parallel()
	l := open(t, pgtest.URL(t), Options{Conns: 2})
	var mu sync.Mutex
	var held []lock.Lease
	take := func(ctx context.Context, k lock.Key) error {
		le, err := l.Lock(ctx, k, lock.Exclusive)
		if err == nil {
			mu.Lock()
			held = append(held, le)
			mu.Unlock()
		}
		return err
	}
	calls := []context.Context{lock.WithCall(t.Context()), lock.WithCall(t.Context())}
	for i, ctx := range calls {
		if err := take(ctx, lock.NewKey("first", string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	for i, ctx := range calls {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := take(ctx, lock.NewKey("second", string(rune('a'+i))))
		cancel()
		if err != nil {
			t.Fatalf("call %d, second key with the pool full: %v", i, err)
		}
	}
	third := lock.WithCall(t.Context())
	ctx, cancel := context.WithTimeout(third, 200*time.Millisecond)
	err := take(ctx, lock.NewKey("first", "c"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a new call with the pool full: %v (want it to wait)", err)
	}
	if st := l.Stats(); st.InUse != 4 {
		t.Fatalf("in use %d, want 4", st.InUse)
	}
	for _, le := range held {
		le.Unlock()
	}
	ctx, cancel = context.WithTimeout(third, 5*time.Second)
	defer cancel()
	if err := take(ctx, lock.NewKey("first", "c")); err != nil {
		t.Fatalf("a new call once connections were given back: %v", err)
	}
	held[len(held)-1].Unlock()
	if st := l.Stats(); st.InUse != 0 || st.Idle > 2 {
		t.Fatalf("stats at rest: %+v (want 0 in use, at most 2 pooled)", st)
	}
}

// TestOpenHidesTheURL: a URL that does not parse is refused without quoting it (it may
// carry the password).
func TestOpenHidesTheURL(t *testing.T) {
	t.Parallel()
	_, err := Open(t.Context(), "postgres://fs:s3cret-pw@db:notaport/x", Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("bad URL: %v", err)
	}
}

// BenchmarkLockUnlock is one exclusive Lock and its Unlock (two round trips to PostgreSQL on
// a pooled connection), with the in-process Locker measured in the same run as the baseline:
// go test ./core/lock/pglock -run '^$' -bench LockUnlock -benchtime 2000x
func BenchmarkLockUnlock(b *testing.B) {
	for _, c := range []struct {
		name string
		l    lock.Locker
	}{{"local", lock.NewLocal()}, {"postgres", open(b, pgtest.URL(b), Options{})}} {
		b.Run(c.name, func(b *testing.B) {
			k := lock.NewKey("bench", "k")
			for b.Loop() {
				le, err := c.l.Lock(context.Background(), k, lock.Exclusive)
				if err != nil {
					b.Fatal(err)
				}
				le.Unlock()
			}
		})
	}
}
