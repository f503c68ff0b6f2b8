package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// maxConns bounds the SQLite connection pool. SQLite serialises writers anyway; a few
// connections let WAL readers proceed while one writer holds the lock, more would only
// busy-wait.
const maxConns = 8

// pgMaxConns bounds each server's PostgreSQL connections: enough for the short statements of
// many calls at once, few enough that several replicas stay well inside PostgreSQL's default
// max_connections (100).
const pgMaxConns = 16

// pgConnLife closes a PostgreSQL connection after this long, so that a failover or a new
// address of the database host is followed.
const pgConnLife = 30 * time.Minute

// busyTimeoutMS is how long a connection waits for the write lock before "database is
// locked". Every write is a short statement, so this is only reached under a pathological
// backlog.
const busyTimeoutMS = 5000

// cacheKiB is each connection's page cache (PRAGMA cache_size). SQLite's default is 2 MiB
// per connection, allocated as pages are first read and kept for the connection's life:
// the state database grows with the audit log, so every pooled connection slowly filled its
// cache (up to 16 MiB outside the Go heap). The hot pages (quota, locks, the audit tail) fit
// in far less; the operating system's page cache holds the rest.
const cacheKiB = 1024

// connIdle is how long an unused pooled connection stays open (and keeps its page cache)
// after a burst of load.
const connIdle = 2 * time.Minute

// DB is the state database. It is safe for concurrent use by many goroutines and by several
// processes sharing the same SQLite file or PostgreSQL database.
type DB struct {
	conn // statements on the pool, each bounded by stmtTimeout
	sql  *sql.DB
	// journal queues the journal's settlements (journal_queue.go).
	journal journalQueue
}

// Source is where the state database lives: Driver SQLite (or "") with the file Path, or
// Driver Postgres with the connection URL (a secret: errors never show it).
type Source struct {
	Driver, Path, URL string
}

// Open opens (creating it if needed) the SQLite state database at path and applies the
// pending migrations, like OpenSource.
func Open(path string) (*DB, error) { return OpenSource(Source{Driver: SQLite, Path: path}) }

// OpenSource opens the state database of src and applies the pending migrations. A database
// written by a newer fileshed (a migration this binary does not know) is refused rather
// than used half-understood.
func OpenSource(src Source) (*DB, error) {
	d, err := connect(src)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	if _, _, err := d.migrate(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Migrate applies the pending migrations of src's database and reports its schema version
// before and after (`fileshed admin migrate`, a migration job before the servers start).
func Migrate(ctx context.Context, src Source) (before, after int, err error) {
	d, err := connect(src)
	if err != nil {
		return 0, 0, err
	}
	defer d.Close()
	return d.migrate(ctx)
}

// connect opens src's database without migrating it.
func connect(src Source) (*DB, error) {
	switch src.Driver {
	case SQLite, "":
		return connectSQLite(src.Path)
	case Postgres:
		return connectPostgres(src.URL)
	}
	return nil, fmt.Errorf("store: unknown driver %q (sqlite or postgres)", src.Driver)
}

// connectSQLite opens the SQLite file at path (created 0600 if missing) in WAL mode.
func connectSQLite(path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: resolve state database path: %w", err)
	}
	// Why: SQLite creates a missing database file 0644 (minus umask), and the WAL and shm
	// files inherit the database file's mode. Creating it ourselves first makes all three
	// private (0600), like every other file fileshed writes. An existing file is untouched.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: create state database: %w", unwrapPath(err))
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("store: create state database: %w", unwrapPath(err))
	}

	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("store: open state database: %w", err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(connIdle)

	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	if err := enableWAL(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return newDB(db, SQLite), nil
}

// connectPostgres opens a pool on the PostgreSQL database of connURL and checks that it answers.
func connectPostgres(connURL string) (*DB, error) {
	cfg, err := pgx.ParseConfig(connURL)
	if err != nil {
		// Why not the parser's message: it quotes the URL, whose password it masks only
		// on a best-effort basis.
		return nil, errors.New("store: state.url is not a PostgreSQL URL (postgres://user:password@host:5432/database)")
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "fileshed" // names the server in pg_stat_activity
	}
	// The sessions' commits do not wait for their WAL flush (synchronous_commit=off): a
	// crash of the database server may lose the last acknowledged changes of usage (which a
	// recount repairs), audit rows, a link's download count, the heartbeats and membership
	// sightings, never the database's consistency. The records that guard files
	// (ownership, locked edits, user keys, links, a member's departure, the shared keys and
	// identity) commit durably whatever this says (durably, conn.go). Each write makes two
	// committing statements: waiting for the disk on every one made a Storage write 2.06×
	// the SQLite driver's, 1.51× without (BENCHMARKS.md). A state.url with
	// synchronous_commit=on makes every commit durable.
	if _, ok := cfg.RuntimeParams["synchronous_commit"]; !ok {
		cfg.RuntimeParams["synchronous_commit"] = "off"
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(pgMaxConns)
	db.SetMaxIdleConns(pgMaxConns)
	db.SetConnMaxIdleTime(connIdle)
	db.SetConnMaxLifetime(pgConnLife)
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connect to the state database: %w", err)
	}
	return newDB(db, Postgres), nil
}

// Describe names the PostgreSQL database of connURL for an operator: its name, user and host,
// never the URL (which may carry the password); "" when connURL does not parse.
func Describe(connURL string) string {
	cfg, err := pgx.ParseConfig(connURL)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("database %s as %s on %s:%d", cfg.Database, cfg.User, cfg.Host, cfg.Port)
}

// newDB wraps an open pool.
func newDB(db *sql.DB, d dialect) *DB {
	return &DB{conn: conn{dialect: d, x: db, timeout: stmtTimeout}, sql: db}
}

// Ping checks that the database answers.
func (d *DB) Ping(ctx context.Context) error { return d.sql.PingContext(ctx) }

// Close closes the database. Calls in flight finish first (database/sql semantics).
func (d *DB) Close() error {
	d.closeJournal()
	return d.sql.Close()
}

// dsn builds the driver's data source name for the absolute path abs.
//
// Why a file: URI with the path percent-encoded: a plain path silently drops SQLite's own
// URI parameters (LIBS.md), and the driver splits the DSN at the first '?', so a storage
// path containing '?', '#' or '%' must be escaped to reach SQLite intact.
// Why _txlock=immediate: a read-then-write transaction started DEFERRED fails with
// "database is locked" when another writer got there first (LIBS.md measured 424 of 800);
// IMMEDIATE takes the write lock at BEGIN and waits busy_timeout for it instead.
// _dqs=0 turns double-quoted strings into errors instead of silently becoming literals.
// The cache_size pragma bounds each connection's page cache (cacheKiB).
// WAL is not set here but once by enableWAL: the journal mode is stored in the file.
func dsn(abs string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeoutMS))
	q.Set("_synchronous", "NORMAL")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	q.Set("_dqs", "0")
	q.Set("_pragma", fmt.Sprintf("cache_size(-%d)", cacheKiB))
	u.RawQuery = q.Encode()
	return u.String()
}

// enableWAL switches the database file to WAL (readers never block the writer). The mode is
// persistent, so this is a no-op on every later open.
//
// Why a loop: SQLite answers SQLITE_BUSY to the switch without waiting busy_timeout when
// another connection is opening the same new file at that moment (measured: 7 of 200 rounds
// of 8 concurrent opens of a new file failed; processes starting together would hit it).
// Retrying briefly until the deadline is all it takes.
func enableWAL(ctx context.Context, db *sql.DB) error {
	for {
		var mode string
		err := db.QueryRowContext(ctx, `PRAGMA journal_mode=WAL`).Scan(&mode)
		var se *sqlite.Error
		switch {
		case err == nil && mode == "wal":
			return nil
		case err == nil:
			return fmt.Errorf("store: state database cannot use WAL (journal mode %q)", mode)
		case !errors.As(err, &se) || se.Code()&0xff != sqliteBusy:
			return fmt.Errorf("store: enable WAL: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("store: enable WAL: %w", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// sqliteBusy is SQLite's primary result code SQLITE_BUSY.
const sqliteBusy = 5

// unwrapPath strips the *os.PathError wrapper, whose message carries the host path: store
// errors must never show one.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// micros converts t to the stored form (Unix microseconds, what a PostgreSQL timestamptz
// keeps), using now when t is zero.
func micros(t time.Time) int64 {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UnixMicro()
}

// fromMicros converts a stored timestamp back to a UTC time.
func fromMicros(us int64) time.Time {
	return time.UnixMicro(us).UTC()
}
