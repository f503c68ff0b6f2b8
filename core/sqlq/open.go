package sqlq

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Options say how a database is opened.
type Options struct {
	// ReadOnly opens with mode=ro and denies every writing action in the authorizer.
	ReadOnly bool
	// Create allows creating a missing file (ignored when ReadOnly).
	Create bool
	// JournalMode is set on writable opens ("wal", "delete", ...; "" keeps the file's).
	JournalMode string
	// MaxBytes bounds the database file through PRAGMA max_page_count (0 = no bound): a
	// write that would grow it further fails with ErrFull.
	MaxBytes int64
	// BusyMillis is how long a statement waits for another writer's lock.
	BusyMillis int
}

// MaxColumns is SQLite's column limit (SQLITE_MAX_COLUMN), the widest table or CSV.
const MaxColumns = 2000

// DB is one open database: a single connection with the guard rails installed. Not safe
// for concurrent use.
type DB struct {
	db   *sql.DB
	conn *sql.Conn
	auth *policy
}

// Denial says what the authorizer refused.
type Denial struct {
	What string // "ATTACH", "PRAGMA writable_schema", "function load_extension", "write (INSERT)"
	// Write is true when the action was refused only because the database is read-only.
	Write bool
}

// ForbiddenError is returned when the authorizer refused a statement.
type ForbiddenError struct {
	Denial
	Err error
}

func (e *ForbiddenError) Error() string { return "not authorized: " + e.What }
func (e *ForbiddenError) Unwrap() error { return e.Err }

// Open opens the database file at path (a host path the caller confined) with the
// guard rails of the package.
func Open(ctx context.Context, path string, o Options) (*DB, error) {
	mode := "rw"
	switch {
	case o.ReadOnly:
		mode = "ro"
	case o.Create:
		mode = "rwc"
	}
	q := url.Values{}
	q.Set("mode", mode)
	q.Set("_defensive", "1")
	q.Set("_busy_timeout", fmt.Sprint(max(o.BusyMillis, 0)))
	q.Add("_pragma", "trusted_schema=OFF")
	q.Add("_pragma", "cell_size_check=ON")
	// Temporary tables, indexes and sorting stay in memory, where the connection's bound
	// counts them (heap.go): no temporary file in /var/tmp, which no quota reaches and which
	// would hold an encrypted zone's rows in plaintext.
	q.Add("_pragma", "temp_store=MEMORY")
	if !o.ReadOnly && o.JournalMode != "" {
		q.Set("_journal_mode", strings.ToUpper(o.JournalMode))
	}
	if o.Create && !o.ReadOnly {
		// Why: SQLite creates a missing database 0644 (minus umask), and its journal and WAL
		// take the database's mode; created here first, they are all 0600. O_EXCL: an
		// existing name (a symlink too) is left to SQLite as it is.
		// Any other failure is SQLite's to report, as it would without this.
		if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			f.Close()
		}
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	d := &DB{db: db, conn: conn, auth: &policy{readOnly: o.ReadOnly}}
	if err := d.setup(ctx, o); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// setup installs the limits and the authorizer, after the driver's own PRAGMAs ran.
func (d *DB) setup(ctx context.Context, o Options) error {
	if o.MaxBytes > 0 && !o.ReadOnly {
		var page int64
		if err := d.conn.QueryRowContext(ctx, "PRAGMA page_size").Scan(&page); err != nil {
			return err
		}
		pages := max(o.MaxBytes/max(page, 512), 1)
		if _, err := d.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count=%d", pages)); err != nil {
			return err
		}
	}
	// SQLITE_LIMIT_LENGTH: zeroblob(2e9) fails before it allocates (MaxValue).
	for id, v := range map[int]int{sqlite3.SQLITE_LIMIT_ATTACHED: 0, sqlite3.SQLITE_LIMIT_LENGTH: MaxValue(),
		sqlite3.SQLITE_LIMIT_SQL_LENGTH: 1 << 20, sqlite3.SQLITE_LIMIT_COLUMN: MaxColumns} {
		if _, err := sqlite.Limit(d.conn, id, v); err != nil {
			return err
		}
	}
	return d.conn.Raw(func(dc any) error {
		r, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return errors.New("sqlq: the driver has no authorizer")
		}
		return r.RegisterAuthorizer(d.auth.decide)
	})
}

// Close closes the connection (which checkpoints and removes a WAL file when it is the
// last one open).
func (d *DB) Close() error {
	var err error
	if d.conn != nil {
		err = d.conn.Close()
	}
	return errors.Join(err, d.db.Close())
}

// Checkpoint copies the WAL into the database file and truncates it, so that the file
// alone is a consistent database (before a commit of it). Internal: not subject to the
// model's policy.
func (d *DB) Checkpoint(ctx context.Context) error {
	return d.internal(func() error {
		_, err := d.conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		return err
	})
}

// Tidy removes the -wal and -shm files that a read-only connection to a WAL database
// leaves behind (it may not delete them): a read-write connection that runs one read of
// the schema, then closes, deletes them the way SQLite does when the last connection
// closes, under SQLite's own locks (so never while another connection uses them).
func Tidy(ctx context.Context, path string) error {
	d, err := Open(ctx, path, Options{})
	if err != nil {
		return err
	}
	var n int64
	err = d.conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n)
	return errors.Join(err, d.Close())
}

// SetJournalMode switches the journal mode (internal: not subject to the model's policy).
func (d *DB) SetJournalMode(ctx context.Context, mode string) error {
	return d.internal(func() error {
		_, err := d.conn.ExecContext(ctx, "PRAGMA journal_mode="+strings.ToUpper(mode))
		return err
	})
}

// internal runs fn with the authorizer in internal mode (our own statements).
func (d *DB) internal(fn func() error) error {
	d.auth.mu.Lock()
	d.auth.internal = true
	d.auth.mu.Unlock()
	defer func() {
		d.auth.mu.Lock()
		d.auth.internal = false
		d.auth.mu.Unlock()
	}()
	return fn()
}

// denied wraps err as a *ForbiddenError when the authorizer refused something since the
// last reset.
func (d *DB) denied(err error) error {
	if err == nil {
		return nil
	}
	if den, ok := d.auth.take(); ok {
		return &ForbiddenError{Denial: den, Err: err}
	}
	return err
}
