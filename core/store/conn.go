package store

import (
	"context"
	"database/sql"
	"time"
)

// stmtTimeout bounds each statement, and each transaction, whose context has no earlier
// deadline. Every statement of the store is a short, indexed operation: one that runs this
// long means the database is unreachable or stuck, and the caller gets an error instead of
// hanging (the audit writer and the sweeps pass contexts without a deadline). The drivers
// stop a statement when its context ends (pgx cancels it on the server).
const stmtTimeout = 30 * time.Second

// maxTxAttempts bounds how often a transaction the database rolled back (dialect.retryable)
// is run again.
const maxTxAttempts = 5

// execer is what both *sql.DB and *sql.Tx offer.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// conn runs statements on the pool or in a transaction, converting values at the dialect's
// boundary (dialect.args on the way in, dialect.dests on the way out). Every query of the
// store goes through one.
type conn struct {
	dialect dialect
	x       execer
	// timeout bounds each statement (stmtTimeout); 0 inside a transaction, which inTx
	// bounds as a whole.
	timeout time.Duration
}

// bound gives ctx the statement deadline, unless it has an earlier one.
func (c conn) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout)
}

// unbounded is c without stmtTimeout: for the statements whose length grows with the data
// (an audit export, a full read), which only their caller's ctx bounds.
func (c conn) unbounded() conn {
	c.timeout = 0
	return c
}

// exec runs a statement that returns no rows.
func (c conn) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	return c.x.ExecContext(ctx, query, c.dialect.args(args)...)
}

// queryRow runs a query that returns at most one row; Scan reads it.
func (c conn) queryRow(ctx context.Context, query string, args ...any) row {
	ctx, cancel := c.bound(ctx)
	return row{c.x.QueryRowContext(ctx, query, c.dialect.args(args)...), c.dialect, cancel}
}

// query runs a query that returns rows; Close them.
func (c conn) query(ctx context.Context, query string, args ...any) (*rows, error) {
	ctx, cancel := c.bound(ctx)
	rs, err := c.x.QueryContext(ctx, query, c.dialect.args(args)...)
	if err != nil {
		cancel()
		return nil, err
	}
	return &rows{rs, c.dialect, cancel}, nil
}

// row is the result of queryRow.
type row struct {
	r       *sql.Row
	dialect dialect
	cancel  context.CancelFunc
}

// Scan copies the row's columns into dest (sql.ErrNoRows when there is none).
func (r row) Scan(dest ...any) error {
	defer r.cancel()
	return r.r.Scan(r.dialect.dests(dest)...)
}

// rows is the result of query.
type rows struct {
	*sql.Rows
	dialect dialect
	cancel  context.CancelFunc
}

// Scan copies the current row's columns into dest.
func (r *rows) Scan(dest ...any) error { return r.Rows.Scan(r.dialect.dests(dest)...) }

// Close closes the rows and ends their statement's deadline.
func (r *rows) Close() error {
	err := r.Rows.Close()
	r.cancel()
	return err
}

// inTx runs fn in one transaction and commits it, or rolls it back if fn fails; fn must use
// the ctx and the conn it is given. On SQLite the transaction is BEGIN IMMEDIATE (the DSN):
// it takes the write lock at once. A transaction PostgreSQL rolled back to break a deadlock
// or a serialization conflict runs again (fn is plain SQL, so running it twice is safe).
func (d *DB) inTx(ctx context.Context, fn func(ctx context.Context, tx conn) error) error {
	ctx, cancel := d.bound(ctx)
	defer cancel()
	for attempt := 1; ; attempt++ {
		err := d.tryTx(ctx, fn)
		if err == nil || attempt == maxTxAttempts || ctx.Err() != nil || !d.dialect.retryable(err) {
			return err
		}
	}
}

// tryTx is one attempt of inTx.
func (d *DB) tryTx(ctx context.Context, fn func(ctx context.Context, tx conn) error) error {
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(ctx, conn{dialect: d.dialect, x: tx}); err != nil {
		_ = tx.Rollback() // the error from fn is the one worth reporting
		return err
	}
	return tx.Commit()
}

// durably runs fn in one transaction, like inTx, whose commit waits for its WAL on the
// PostgreSQL server's disk (SET LOCAL synchronous_commit = on) whatever the sessions'
// setting. For the records that guard files — ownership, locked edits, user keys, links,
// the shared keys and the state's identity — a crash of the database must not lose an
// acknowledged change: a lost owner_ro record makes a file writable by every member, a
// lost lock lets another conversation in, a lost key turns a user's sealed files into
// ciphertext, a lost revocation brings a link back. Usage (recounted), the audit trail
// and a link's download count keep the cheaper commit. SQLite: inTx (synchronous=NORMAL in
// WAL mode loses nothing in a crash of the process, only of the host).
func (d *DB) durably(ctx context.Context, fn func(ctx context.Context, tx conn) error) error {
	return d.inTx(ctx, func(ctx context.Context, tx conn) error {
		if err := tx.durable(ctx); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
}

// durable makes the commit of the transaction tx wait for its WAL on the PostgreSQL
// server's disk (durably), from any point of the transaction; nothing on SQLite.
func (c conn) durable(ctx context.Context) error {
	if c.dialect != Postgres {
		return nil
	}
	_, err := c.exec(ctx, `SET LOCAL synchronous_commit = on`)
	return err
}

// durableExec is exec as one durably committed transaction.
func (d *DB) durableExec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := d.durably(ctx, func(ctx context.Context, tx conn) error {
		var err error
		res, err = tx.exec(ctx, query, args...)
		return err
	})
	return res, err
}
