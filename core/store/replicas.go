package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"time"
)

// The replicas of one storage (state.driver postgres, README "Several replicas"): each
// server process has a random id (confine.Replica), a row in replicas that its heartbeat
// keeps fresh, and a session-level advisory lock on its id held on a connection of its own
// (Session) for as long as it lives. The lock is taken shared: the id is the process's, and
// the servers of one process (tests start several) hold it together. A replica is dead when its lock is free (its session
// ended: PostgreSQL releases a dead client's locks) and its heartbeat is older than a bound:
// then its temporary files are leftovers, and the owners it wrote for (replica_owners, the
// journal of its reservations) may count a reservation it will never settle. Times are the
// database's clock (nowUS), so the replicas' clocks never meet.

// Replica is one server of the storage.
type Replica struct {
	ID   string
	Host string
	PID  int64
	// Started and Seen are the database's times of its start and of its last heartbeat.
	Started, Seen time.Time
}

// Advisory lock keys of replicas, in the two-key form: leaderLock in advisoryNamespace (the
// one leader), a replica's id hashed in replicaNamespace (its liveness).
const (
	leaderLock       = 2
	replicaNamespace = 0x66737270 // "fsrp"
)

// nowUS is the database's current time in microseconds since the epoch, as SQL.
func (d dialect) nowUS() string {
	if d == Postgres {
		return `CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)`
	}
	return `CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)`
}

// replicaKey is the second key of a replica's liveness lock.
func replicaKey(id string) int32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int32(h.Sum32())
}

// Heartbeat records that r is alive now (database time), adding its row when there is none
// (its first beat, or after a leader took it for dead and forgot it: then added reports
// true, and the replica must note its owners again).
func (d *DB) Heartbeat(ctx context.Context, r Replica) (added bool, err error) {
	res, err := d.exec(ctx, `UPDATE replicas SET seen_us = `+d.dialect.nowUS()+` WHERE id = $1`, r.ID)
	if err != nil {
		return false, fmt.Errorf("store: heartbeat: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return false, err
	}
	if _, err := d.exec(ctx, `INSERT INTO replicas (id, host, pid, started_us, seen_us)
		VALUES ($1, $2, $3, `+d.dialect.nowUS()+`, `+d.dialect.nowUS()+`) ON CONFLICT (id) DO NOTHING`, r.ID, r.Host, r.PID); err != nil {
		return false, fmt.Errorf("store: register replica: %w", err)
	}
	return true, nil
}

// Replicas lists the replicas with a row, oldest first, and how long ago (database time)
// each was last seen.
func (d *DB) Replicas(ctx context.Context) ([]Replica, error) {
	rs, err := d.query(ctx, `SELECT id, host, pid, started_us, seen_us FROM replicas ORDER BY started_us, id`)
	if err != nil {
		return nil, fmt.Errorf("store: list replicas: %w", err)
	}
	defer rs.Close()
	var out []Replica
	for rs.Next() {
		var r Replica
		var started, seen int64
		if err := rs.Scan(&r.ID, &r.Host, &r.PID, &started, &seen); err != nil {
			return nil, fmt.Errorf("store: list replicas: %w", err)
		}
		r.Started, r.Seen = time.UnixMicro(started), time.UnixMicro(seen)
		out = append(out, r)
	}
	return out, rs.Err()
}

// Silent lists the replicas whose last heartbeat is older than quiet (database time): the
// candidates for dead, which Alive then asks.
func (d *DB) Silent(ctx context.Context, quiet time.Duration) ([]string, error) {
	rs, err := d.query(ctx, `SELECT id FROM replicas WHERE seen_us < `+d.dialect.nowUS()+` - $1 ORDER BY id`, quiet.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("store: silent replicas: %w", err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: silent replicas: %w", err)
		}
		out = append(out, id)
	}
	return out, rs.Err()
}

// Alive reports whether the replica id holds its liveness lock (its Session is open). It
// tries the lock inside a transaction, which releases it at once if it was free.
func (d *DB) Alive(ctx context.Context, id string) (bool, error) {
	if d.dialect != Postgres {
		return false, ErrNoSession
	}
	var free bool
	err := d.inTx(ctx, func(ctx context.Context, tx conn) error {
		return tx.queryRow(ctx, `SELECT pg_try_advisory_xact_lock($1, $2)`, replicaNamespace, replicaKey(id)).Scan(&free)
	})
	if err != nil {
		return false, fmt.Errorf("store: is replica alive: %w", err)
	}
	return !free, nil
}

// NoteWriter records in the journal that replica reserves usage for o: when the replica
// dies, o is one of the owners whose usage the leader measures again.
func (d *DB) NoteWriter(ctx context.Context, replica string, o Owner) error {
	if err := o.validate(); err != nil {
		return err
	}
	if _, err := d.exec(ctx, `INSERT INTO replica_owners (replica_id, owner_kind, owner_id) VALUES ($1, $2, $3)
		ON CONFLICT (replica_id, owner_kind, owner_id) DO NOTHING`, replica, o.Kind, o.ID); err != nil {
		return fmt.Errorf("store: note writer: %w", err)
	}
	return nil
}

// WrittenBy lists the owners replica noted (NoteWriter).
func (d *DB) WrittenBy(ctx context.Context, replica string) ([]Owner, error) {
	rs, err := d.query(ctx, `SELECT owner_kind, owner_id FROM replica_owners WHERE replica_id = $1
		ORDER BY owner_kind, owner_id`, replica)
	if err != nil {
		return nil, fmt.Errorf("store: owners of a replica: %w", err)
	}
	defer rs.Close()
	var out []Owner
	for rs.Next() {
		var o Owner
		if err := rs.Scan(&o.Kind, &o.ID); err != nil {
			return nil, fmt.Errorf("store: owners of a replica: %w", err)
		}
		out = append(out, o)
	}
	return out, rs.Err()
}

// ForgetReplica deletes a dead replica's row, journal and command records, once what it left
// was cleaned.
func (d *DB) ForgetReplica(ctx context.Context, id string) error {
	return d.inTx(ctx, func(ctx context.Context, tx conn) error {
		if _, err := tx.exec(ctx, `DELETE FROM replica_owners WHERE replica_id = $1`, id); err != nil {
			return fmt.Errorf("store: forget replica: %w", err)
		}
		if _, err := tx.exec(ctx, `DELETE FROM commands WHERE replica_id = $1`, id); err != nil {
			return fmt.Errorf("store: forget replica: %w", err)
		}
		if _, err := tx.exec(ctx, `DELETE FROM replicas WHERE id = $1`, id); err != nil {
			return fmt.Errorf("store: forget replica: %w", err)
		}
		return nil
	})
}

// Session is a connection of its own that holds a replica's session-level advisory locks:
// its liveness lock for as long as it is open, and the leader's lock while it leads. When
// the connection dies, PostgreSQL releases both: other replicas then see it dead, and
// another may lead. Use it from one goroutine.
type Session struct {
	c  *sql.Conn
	db *DB
}

// ErrNoSession is OpenSession on SQLite: one server runs alone, with no replica to tell apart.
var ErrNoSession = errors.New("store: replica sessions need state.driver postgres")

// OpenSession opens the session of replica id and takes its liveness lock (shared).
func (d *DB) OpenSession(ctx context.Context, id string) (*Session, error) {
	if d.dialect != Postgres {
		return nil, ErrNoSession
	}
	c, err := d.sql.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: open replica session: %w", err)
	}
	s := &Session{c: c, db: d}
	// Why a shared lock cannot fail to be granted: only Alive takes it exclusively, for the
	// length of a transaction; then this waits that long (with ctx).
	if _, err := s.conn().exec(ctx, `SELECT pg_advisory_lock_shared($1, $2)`, replicaNamespace, replicaKey(id)); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: replica liveness lock: %w", err)
	}
	return s, nil
}

// conn runs statements on the session's connection.
func (s *Session) conn() conn { return conn{dialect: s.db.dialect, x: s.c, timeout: stmtTimeout} }

// Lead tries to become the leader: true when this session holds the leader's lock (it
// keeps it until the session closes).
func (s *Session) Lead(ctx context.Context) (bool, error) {
	var ok bool
	if err := s.conn().queryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, advisoryNamespace, leaderLock).Scan(&ok); err != nil {
		return false, fmt.Errorf("store: leader lock: %w", err)
	}
	return ok, nil
}

// Ping checks that the session's connection is still open (its locks still held).
func (s *Session) Ping(ctx context.Context) error { return s.c.PingContext(ctx) }

// Close ends the session: its locks are released before Close returns (PostgreSQL would
// release them with the connection, but only once its backend has exited), and the
// connection is discarded (driver.ErrBadConn) rather than returned to the pool, where it
// would keep any lock for whoever takes it next.
func (s *Session) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = s.conn().exec(ctx, `SELECT pg_advisory_unlock_all()`)
	_ = s.c.Raw(func(any) error { return driver.ErrBadConn })
	return s.c.Close()
}
