package store

import (
	"context"
	"testing"
	"time"
)

// The journal's rows on both drivers: written pending (odd paths too: NUL, invalid UTF-8,
// the escape of PostgreSQL text, '%' and '_' that LIKE would take for wildcards), settled
// (done, dropped, a placeholder replaced by the paths it stood for), listed per user and
// conversation newest first with a page, the later changes of a path found (itself, below,
// a folder above, a rename), images listed and dropped, undone marked, old rows expired;
// rows without a batch, a user or a valid owner are refused.
func TestJournalRows(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		ann := Owner{"user", "ann"}
		odd := "a\x00b/\xff%_\uFDD0.txt"
		row := func(batch string, n int, conv, p, op string) JournalEntry {
			return JournalEntry{Batch: batch, N: n, Pending: true, Replica: "R1", UserID: "ann", ConvID: conv, Tool: "Patch",
				Owner: ann, Zone: "storage", Path: p, Op: op, BytesBefore: -1, BytesAfter: -1, LinesAdded: -1, LinesRemoved: -1}
		}
		if err := d.JournalBegin(ctx, []JournalEntry{row("b1", 0, "c1", "docs/a.txt", "write"), row("b1", 1, "c1", odd, "create")}); err != nil {
			t.Fatal(err)
		}
		if got, err := d.Journal(ctx, JournalQuery{UserID: "ann"}); err != nil || len(got) != 0 {
			t.Fatalf("pending rows listed: %+v, %v", got, err)
		}
		if p, err := d.JournalPending(ctx, "R1"); err != nil || len(p) != 2 || p[1].Path != odd || !p[0].Pending {
			t.Fatalf("pending: %+v, %v", p, err)
		}
		if p, err := d.JournalPending(ctx, "R2"); err != nil || len(p) != 0 {
			t.Fatalf("another replica's pending: %+v, %v", p, err)
		}
		done := row("b1", 0, "c1", "docs/a.txt", "write")
		done.BytesAfter, done.LinesAdded, done.LinesRemoved, done.Commit, done.Image, done.ImageBytes, done.AfterIdent =
			12, 3, 1, "abc", "cas:00ff", 40, "1:2:12:99"
		if err := d.JournalSettle(ctx, "b1", []JournalEntry{done}, []int{1}, nil); err != nil {
			t.Fatal(err)
		}
		// A command's placeholder replaced by its paths.
		if err := d.JournalBegin(ctx, []JournalEntry{row("b2", 0, "c2", ".", "command")}); err != nil {
			t.Fatal(err)
		}
		a, b := row("b2", 1, "c2", "docs", "delete"), row("b2", 2, "c2", "x_y.txt", "create")
		a.Pending, b.Pending, a.Dir = false, false, true
		a.Image = "tree:11"
		a.ImageBytes = 7
		if err := d.JournalSettle(ctx, "b2", nil, []int{0}, []JournalEntry{a, b}); err != nil {
			t.Fatal(err)
		}
		all, err := d.Journal(ctx, JournalQuery{UserID: "ann"})
		if err != nil || len(all) != 3 || all[0].Path != "x_y.txt" || all[2].Path != "docs/a.txt" {
			t.Fatalf("every row: %+v, %v", all, err)
		}
		w := all[2]
		if w.Pending || w.BytesAfter != 12 || w.LinesAdded != 3 || w.Commit != "abc" || w.Image != "cas:00ff" || w.AfterIdent != "1:2:12:99" ||
			w.At.IsZero() || time.Since(w.At) > time.Minute || w.Owner != ann {
			t.Fatalf("settled row: %+v", w)
		}
		if page, err := d.Journal(ctx, JournalQuery{UserID: "ann", Offset: 1, Limit: 1}); err != nil || len(page) != 1 || page[0].Path != "docs" {
			t.Fatalf("page: %+v, %v", page, err)
		}
		if c1, err := d.Journal(ctx, JournalQuery{UserID: "ann", ConvID: "c1"}); err != nil || len(c1) != 1 {
			t.Fatalf("one conversation: %+v, %v", c1, err)
		}
		if under, err := d.Journal(ctx, JournalQuery{UserID: "ann", Path: "x%y.txt"}); err != nil || len(under) != 0 {
			t.Fatalf("a wildcard matched: %+v", under)
		}
		if bob, err := d.Journal(ctx, JournalQuery{UserID: "bob"}); err != nil || len(bob) != 0 {
			t.Fatalf("another user's rows: %+v, %v", bob, err)
		}
		// Later changes of docs/a.txt after its write: the folder docs removed (above it).
		later, err := d.JournalLater(ctx, ann, "storage", "docs/a.txt", w.ID)
		if err != nil || len(later) != 1 || later[0].Path != "docs" {
			t.Fatalf("later: %+v, %v", later, err)
		}
		if later, err := d.JournalLater(ctx, ann, "storage", "doc", w.ID); err != nil || len(later) != 0 {
			t.Fatalf("a prefix that is not a folder: %+v, %v", later, err)
		}
		if later, err := d.JournalLater(ctx, ann, "documents", "docs/a.txt", 0); err != nil || len(later) != 0 {
			t.Fatalf("another zone: %+v, %v", later, err)
		}
		ims, err := d.JournalImages(ctx, ann)
		if err != nil || len(ims) != 2 || ims[0].Image != "cas:00ff" || ims[1].Bytes != 7 {
			t.Fatalf("images: %+v, %v", ims, err)
		}
		if err := d.JournalDropImage(ctx, ann, "cas:00ff", "evicted"); err != nil {
			t.Fatal(err)
		}
		if e, ok, err := d.JournalByID(ctx, w.ID); err != nil || !ok || e.Image != "" || e.NoImage != "evicted" {
			t.Fatalf("after the eviction: %+v, %v, %v", e, ok, err)
		}
		if err := d.JournalMarkUndone(ctx, []int64{w.ID}, "b9"); err != nil {
			t.Fatal(err)
		}
		if batch, err := d.JournalBatch(ctx, "b1"); err != nil || len(batch) != 1 || batch[0].UndoneBy != "b9" {
			t.Fatalf("batch: %+v, %v", batch, err)
		}
		if n, err := d.JournalExpire(ctx, Owner{"user", "bob"}, time.Now().Add(time.Minute)); err != nil || n != 0 {
			t.Fatalf("expired another owner's %d, %v", n, err)
		}
		if n, err := d.JournalExpire(ctx, Owner{}, time.Now().Add(time.Minute)); err != nil || n != 3 {
			t.Fatalf("expired %d, %v", n, err)
		}
		for name, e := range map[string]JournalEntry{
			"no batch":    {UserID: "ann", Owner: ann},
			"no user":     {Batch: "b", Owner: ann},
			"bad owner":   {Batch: "b", UserID: "ann", Owner: Owner{"nobody", "x"}},
			"empty owner": {Batch: "b", UserID: "ann", Owner: Owner{"user", ""}},
		} {
			if err := d.JournalBegin(ctx, []JournalEntry{e}); err == nil {
				t.Errorf("%s: written", name)
			}
		}
		if _, err := d.Journal(ctx, JournalQuery{}); err == nil {
			t.Error("the journal of every user listed")
		}
	})
}

// A command's thousands of paths are written in one call (chunked inserts, in one
// transaction). 2,000 rows, 400 statements: 10,000 overran the transaction's 30 s under
// -race beside the package's parallel tests (CI).
func TestJournalManyRows(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		rows := make([]JournalEntry, 2000)
		for i := range rows {
			rows[i] = JournalEntry{Batch: "b", N: i, UserID: "ann", ConvID: "c", Tool: "shed_exec", Owner: Owner{"user", "ann"},
				Zone: "storage", Path: "f" + string(rune('a'+i%26)), Op: "create"}
		}
		if err := d.JournalBegin(ctx, rows); err != nil {
			t.Fatal(err)
		}
		if got, err := d.JournalBatch(ctx, "b"); err != nil || len(got) != len(rows) || got[len(rows)-1].N != len(rows)-1 {
			t.Fatalf("%d rows, %v", len(got), err)
		}
	})
}
