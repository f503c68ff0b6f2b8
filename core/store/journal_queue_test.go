package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// rawState is the state of row n of batch as the database holds it now, read without
// writing the queued settlements first ("" when the row is gone).
func rawState(t *testing.T, d *DB, batch string, n int) string {
	t.Helper()
	var state string
	err := d.queryRow(context.Background(), `SELECT state FROM journal WHERE batch = $1 AND n = $2`, batch, n).Scan(&state)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	return state
}

// pendingRow is row n of batch, pending, of ann in Storage.
func pendingRow(batch string, n int, p string) JournalEntry {
	return JournalEntry{Batch: batch, N: n, Pending: true, Replica: "R1", UserID: "ann", ConvID: "c", Tool: "Patch",
		Owner: Owner{"user", "ann"}, Zone: "storage", Path: p, Op: "write", BytesBefore: 3, BytesAfter: -1,
		LinesAdded: -1, LinesRemoved: -1, Image: "cas:" + p}
}

// A settlement queued on SQLite is not in the database until a read of the journal through
// the same DB, which writes it first (and a dropped row is gone then); on PostgreSQL, shared
// by replicas, it is written at once.
func TestJournalSettleQueuedUntilRead(t *testing.T) {
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		d.journal.delay = time.Hour // nothing but the read writes the queue
		ctx := context.Background()
		must(t, d.JournalBegin(ctx, []JournalEntry{pendingRow("b", 0, "a.txt"), pendingRow("b", 1, "b.txt")}))
		done := pendingRow("b", 0, "a.txt")
		done.BytesAfter, done.AfterIdent = 4, "f:1:2:4:5"
		must(t, d.JournalSettleLater(ctx, "b", []JournalEntry{done}, []int{1}))
		want, wantDropped := "pending", "pending"
		if drv == Postgres {
			want, wantDropped = "done", ""
		}
		if got, dropped := rawState(t, d, "b", 0), rawState(t, d, "b", 1); got != want || dropped != wantDropped {
			t.Fatalf("%s: right after the settlement: %q and %q, want %q and %q", drv, got, dropped, want, wantDropped)
		}
		rows, err := d.Journal(ctx, JournalQuery{UserID: "ann"})
		must(t, err)
		if len(rows) != 1 || rows[0].Path != "a.txt" || rows[0].BytesAfter != 4 || rows[0].AfterIdent != "f:1:2:4:5" {
			t.Fatalf("%s: the journal read after it: %+v", drv, rows)
		}
		if p, err := d.JournalPending(ctx, ""); err != nil || len(p) != 0 {
			t.Fatalf("%s: pending after the read: %+v, %v", drv, p, err)
		}
	})
}

// Nobody reading, the queue is written on its own, and Close writes what is left.
func TestJournalSettleQueueWrittenByItselfAndAtClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fileshed.sqlite")
	d, err := Open(path)
	must(t, err)
	ctx := context.Background()
	must(t, d.JournalBegin(ctx, []JournalEntry{pendingRow("b", 0, "a.txt")}))
	must(t, d.JournalSettleLater(ctx, "b", []JournalEntry{pendingRow("b", 0, "a.txt")}, nil))
	for deadline := time.Now().Add(10 * time.Second); rawState(t, d, "b", 0) != "done"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the queued settlement was never written")
		}
	}
	d.journal.delay = time.Hour // Close writes it
	must(t, d.JournalBegin(ctx, []JournalEntry{pendingRow("c", 0, "c.txt")}))
	must(t, d.JournalSettleLater(ctx, "c", []JournalEntry{pendingRow("c", 0, "c.txt")}, nil))
	must(t, d.Close())
	d, err = Open(path)
	must(t, err)
	defer d.Close()
	if got := rawState(t, d, "c", 0); got != "done" {
		t.Fatalf("after Close: %q", got)
	}
}

// A server killed with settlements queued leaves their rows pending, never settled wrong
// nor lost: the recovery settles them from the disk at the next start (core).
func TestJournalSettleQueueLostInACrashLeavesRowsPending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fileshed.sqlite")
	d, err := Open(path)
	must(t, err)
	d.journal.delay = time.Hour
	ctx := context.Background()
	must(t, d.JournalBegin(ctx, []JournalEntry{pendingRow("b", 0, "a.txt")}))
	must(t, d.JournalSettleLater(ctx, "b", []JournalEntry{pendingRow("b", 0, "a.txt")}, nil))
	must(t, d.sql.Close()) // the crash: the queue is never written
	d.closeJournal()       // what the dead process would have written fails against the closed pool
	d, err = Open(path)
	must(t, err)
	defer d.Close()
	p, err := d.JournalPending(ctx, "")
	if err != nil || len(p) != 1 || p[0].Path != "a.txt" {
		t.Fatalf("pending after the crash: %+v, %v", p, err)
	}
}

// An image evicted while its row's settlement was queued stays evicted: the settlement does
// not bring back an image whose object is gone.
func TestJournalSettleKeepsAnEviction(t *testing.T) {
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		d.journal.delay = time.Hour
		ctx := context.Background()
		row := pendingRow("b", 0, "a.txt")
		row.ImageBytes = 3
		must(t, d.JournalBegin(ctx, []JournalEntry{row}))
		must(t, d.JournalSettleLater(ctx, "b", []JournalEntry{row}, nil))
		if drv == SQLite {
			// The eviction does not read the journal: it comes before the settlement.
			must(t, d.JournalDropImage(ctx, row.Owner, row.Image, "evicted"))
		}
		rows, err := d.Journal(ctx, JournalQuery{UserID: "ann"})
		must(t, err)
		if drv == Postgres {
			must(t, d.JournalDropImage(ctx, row.Owner, row.Image, "evicted"))
			rows, err = d.Journal(ctx, JournalQuery{UserID: "ann"})
			must(t, err)
		}
		if len(rows) != 1 || rows[0].Image != "" || rows[0].ImageBytes != 0 || rows[0].NoImage != "evicted" {
			t.Fatalf("%s: %+v", drv, rows)
		}
	})
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
