package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// The settlements of the change journal, written in batches (issue 36 §5). A change's row
// is written pending before the change, synchronously: never a change without its row. Its
// settlement (done with the after state, or dropped) need not be: a server killed before
// it leaves the row pending, and the recovery settles it from the disk's identity, as it
// does for a server killed between the change and a synchronous settlement. So on SQLite,
// where one server is alone with its state database, JournalSettleLater queues the
// settlement, and the queue is written in one transaction when settleDelay has passed since
// its first entry, when it holds settleBatch entries, before every read of the journal
// through this DB (so a listing, an undo's conflict check, a recovery or an eviction in
// this process never sees a settled change as pending) and at Close.
//
// On PostgreSQL the settlement stays synchronous: replicas share the database, and
// another replica reading the journal (its changes, or an undo's check of the later
// changes of a path, which holds the path's lock that this change has released) must find
// the change settled when its call has answered; a pending row there could as well be a
// change still running, which no reader may wait for without a bound.
const (
	settleDelay = 50 * time.Millisecond
	settleBatch = 256
)

// settlement is one queued JournalSettle without additions.
type settlement struct {
	batch string
	done  []JournalEntry
	drop  []int
}

// journalQueue is a DB's queue of settlements (zero value ready).
type journalQueue struct {
	// delay is settleDelay, or what a test sets.
	delay  time.Duration
	mu     sync.Mutex
	items  []settlement
	timer  *time.Timer
	closed bool
	// writing is held by the one flush at a time: a flush that returns has written every
	// settlement queued before it started.
	writing sync.Mutex
	// insert is the prepared INSERT of one row (JournalBegin's common case), nil until the
	// first use or when preparing failed.
	insertOnce sync.Once
	insert     *sql.Stmt
}

// JournalSettleLater is JournalSettle without additions (add rows get their ids at once, in
// the order of the changes): queued on SQLite (see above), synchronous on PostgreSQL, after
// Close, or when the database answers an error to the queue (then returned).
func (d *DB) JournalSettleLater(ctx context.Context, batch string, done []JournalEntry, drop []int) error {
	q := &d.journal
	if d.dialect == Postgres {
		return d.JournalSettle(ctx, batch, done, drop, nil)
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return d.JournalSettle(ctx, batch, done, drop, nil)
	}
	q.items = append(q.items, settlement{batch: batch, done: done, drop: drop})
	switch {
	case len(q.items) >= settleBatch:
		if q.timer != nil {
			q.timer.Stop()
			q.timer = nil
		}
		q.mu.Unlock()
		d.flushJournal()
		return nil
	case q.timer == nil:
		q.timer = time.AfterFunc(cmp.Or(q.delay, settleDelay), d.flushJournal)
	}
	q.mu.Unlock()
	return nil
}

// flushJournal writes the queued settlements in one transaction. A failure leaves their
// rows pending (the recovery settles them at the next start): logged, as a failed
// synchronous settlement is.
func (d *DB) flushJournal() {
	q := &d.journal
	q.writing.Lock()
	defer q.writing.Unlock()
	q.mu.Lock()
	items := q.items
	q.items = nil
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	q.mu.Unlock()
	if len(items) == 0 {
		return
	}
	rows := 0
	for _, it := range items {
		rows += len(it.done)
	}
	err := d.inTx(context.Background(), func(ctx context.Context, tx conn) error {
		update, release, err := settleUpdate(ctx, tx, rows) // prepared once for the whole queue
		if err != nil {
			return err
		}
		defer release()
		for _, it := range items {
			if err := settleWith(ctx, tx, update, it.batch, it.done, it.drop, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		slog.Warn("journal: settle", "rows", len(items), "err", fmt.Errorf("store: settle journal: %w", err))
	}
}

// closeJournal writes what is queued; later settlements are synchronous (DB.Close).
func (d *DB) closeJournal() {
	q := &d.journal
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	d.flushJournal()
	q.writing.Lock()
	if q.insert != nil {
		_ = q.insert.Close()
	}
	q.writing.Unlock()
}

// insertOne writes one journal row as one statement (atomic by itself: no transaction of
// its own to begin and commit), prepared once per DB.
func (d *DB) insertOne(ctx context.Context, e JournalEntry) error {
	q := &d.journal
	q.insertOnce.Do(func() {
		pctx, cancel := d.bound(ctx)
		defer cancel()
		if st, err := d.sql.PrepareContext(pctx, insertSQL[1]); err == nil {
			q.insert = st
		}
	})
	if q.insert == nil {
		_, err := d.exec(ctx, insertSQL[1], e.values()...)
		return err
	}
	ctx, cancel := d.bound(ctx)
	defer cancel()
	_, err := q.insert.ExecContext(ctx, d.dialect.args(e.values())...)
	return err
}
