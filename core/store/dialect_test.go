package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fileshed/fileshed/internal/pgtest"
)

// awkward are strings PostgreSQL text cannot hold as they are (NUL, invalid UTF-8, a
// truncated sequence) and strings that hold the escape itself, beside plain ones.
var awkward = []string{"", "a.txt", "dir/é.txt", "a\x00b", "\x00", "bad\xff", "\xe2\x82", "\xe2\x82/x",
	textEscape, textEscape + "00", "x" + textEscape + "ff\x00" + textEscape, "\xef\xb7", "ok\uFFFD"}

// TestPGTextRoundTrips: the escape is lossless and yields storable text.
func TestPGTextRoundTrips(t *testing.T) {
	t.Parallel()
	for _, s := range awkward {
		e := pgText(s)
		if !utf8.ValidString(e) || strings.IndexByte(e, 0) >= 0 {
			t.Errorf("pgText(%q) = %q is not storable", s, e)
		}
		if back := fromPGText(e); back != s {
			t.Errorf("fromPGText(pgText(%q)) = %q", s, back)
		}
		if plain := utf8.ValidString(s) && !strings.Contains(s, "\x00") && !strings.Contains(s, textEscape); plain && e != s {
			t.Errorf("plain text %q changed to %q", s, e)
		}
	}
	// Distinct strings stay distinct (the rows of two different names never merge).
	seen := map[string]string{}
	for _, s := range awkward {
		if other, dup := seen[pgText(s)]; dup {
			t.Errorf("%q and %q escape alike", s, other)
		}
		seen[pgText(s)] = s
	}
}

// TestPGTextKeepsFolderPrefixes: a folder's escaped "dir/" is a prefix of the escaped
// paths below it, so the SQL prefix comparisons hold on escaped text.
func TestPGTextKeepsFolderPrefixes(t *testing.T) {
	t.Parallel()
	for _, dir := range awkward {
		for _, rest := range awkward {
			if p := pgText(dir + "/" + rest); !strings.HasPrefix(p, pgText(dir+"/")) || p != pgText(dir)+"/"+pgText(rest) {
				t.Errorf("pgText(%q) does not start with pgText(%q)", dir+"/"+rest, dir+"/")
			}
		}
	}
}

// TestAwkwardNamesRoundTripEverywhere: text with NUL, invalid UTF-8 or the escape reaches
// every table and comes back exactly, and the folder operations (ownership rename, locks
// under a folder) treat such names as on disk, on both drivers. File names never hold NUL
// (the kernel refuses it; SQLite's substr would stop at one), so NUL is tried in the other
// columns: zone keys, conversation ids, a link's path.
func TestAwkwardNamesRoundTripEverywhere(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		dir := "d\xff" + textEscape + "\xe2\x82" // invalid UTF-8, the escape, a truncated sequence
		names := []string{dir, dir + "/a", dir + "/sub\xe2\x82/b", dir + "x/not-under"}
		seedOwnership(t, d, map[string][]string{"g": names})
		for _, p := range names {
			if _, err := d.AcquireLock(ctx, Lock{ZoneKey: "k\x00", Path: p, UserID: "u", ConvID: "c\xff", Since: t0}, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		ls, err := d.LocksUnder(ctx, "k\x00", dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range ls {
			if l.ZoneKey != "k\x00" || l.ConvID != "c\xff" {
				t.Errorf("lock %+v lost its zone key or conversation", l)
			}
			got = append(got, l.Path)
		}
		if want := names[:3]; !slices.Equal(got, want) {
			t.Errorf("LocksUnder = %q, want %q", got, want)
		}
		if err := d.RenameOwnership(ctx, "g", dir, "new"+textEscape); err != nil {
			t.Fatal(err)
		}
		want := []string{dir + "x/not-under", "new" + textEscape, "new" + textEscape + "/a", "new" + textEscape + "/sub\xe2\x82/b"}
		if got := ownedPaths(t, d, "g"); !sameSet(got, want) {
			t.Errorf("after rename %q, want %q", got, want)
		}
		if err := d.AddLink(ctx, Link{ID: "l", Owner: "u", Zone: "storage", ConvID: "c\x00", Path: dir + "/a\x00",
			Expires: t0.Add(time.Hour), IsDir: true}); err != nil {
			t.Fatal(err)
		}
		if l, err := d.LinkByID(ctx, "l"); err != nil || l.Path != dir+"/a\x00" || l.ConvID != "c\x00" || !l.IsDir {
			t.Errorf("link read back as %+v, %v", l, err)
		}
	})
}

// sameSet reports whether a and b hold the same strings (the order of escaped text is the
// database collation's).
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestBoolsAreStoredAsIntegers: a Go bool reaches an INTEGER column as 0 or 1 (pgx refuses
// a bool for an INTEGER parameter) and reads back as a bool.
func TestBoolsAreStoredAsIntegers(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		for id, page := range map[string]bool{"yes": true, "no": false} {
			if err := d.AddLink(ctx, Link{ID: id, Owner: "u", Zone: "storage", Path: "p", Expires: t0.Add(time.Hour),
				IsDir: page, Page: page}); err != nil {
				t.Fatal(err)
			}
			var isDir, pageInt int64
			if err := d.queryRow(ctx, `SELECT is_dir, page FROM links WHERE id = $1`, id).Scan(&isDir, &pageInt); err != nil {
				t.Fatal(err)
			}
			if isDir != boolInt(page) || pageInt != boolInt(page) {
				t.Errorf("link %s stored is_dir=%d page=%d, want %d", id, isDir, pageInt, boolInt(page))
			}
		}
	})
}

// TestDeadlockedTransactionIsRetried: two transactions that take two rows in opposite
// orders deadlock on PostgreSQL; the server rolls one back (40P01), and inTx runs it again,
// so both succeed. On SQLite, BEGIN IMMEDIATE serialises them and nothing deadlocks.
func TestDeadlockedTransactionIsRetried(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		a, b := Owner{"user", "a"}, Owner{"user", "b"}
		for _, o := range []Owner{a, b} {
			if err := d.SetUsage(ctx, o, Amount{}); err != nil {
				t.Fatal(err)
			}
		}
		var both sync.WaitGroup
		both.Add(2)
		var attempts [2]int
		add := `UPDATE usage SET bytes = bytes + 1 WHERE owner_kind = $1 AND owner_id = $2`
		move := func(i int, first, second Owner) error {
			return d.inTx(ctx, func(ctx context.Context, tx conn) error {
				attempts[i]++
				if _, err := tx.exec(ctx, add, first.Kind, first.ID); err != nil {
					return err
				}
				if attempts[i] == 1 {
					// Both hold their first row before either asks for its second (on
					// SQLite the second waits for the first's commit instead, so no wait).
					both.Done()
					if drv == Postgres {
						both.Wait()
					}
				}
				_, err := tx.exec(ctx, add, second.Kind, second.ID)
				return err
			})
		}
		errs := make(chan error, 2)
		go func() { errs <- move(0, a, b) }()
		go func() { errs <- move(1, b, a) }()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("transaction failed: %v", err)
			}
		}
		for _, o := range []Owner{a, b} {
			if got, _ := d.Usage(ctx, o); got.Bytes != 2 {
				t.Errorf("%s has %d bytes, want 2 (each transaction counted once)", o.ID, got.Bytes)
			}
		}
		// At least one run again (a loaded server may also pick a retry as its next victim).
		if drv == Postgres && attempts[0]+attempts[1] < 3 {
			t.Errorf("attempts %v, want a transaction run again", attempts)
		}
	})
}

// TestStatementsEndWithTheirContext: a statement waiting for a row another transaction
// holds returns when its context ends (pgx cancels it on the server; SQLite's wait for the
// write lock ends too), instead of waiting for the holder.
func TestStatementsEndWithTheirContext(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		o := Owner{"user", "held"}
		if err := d.SetUsage(ctx, o, Amount{1, 1}); err != nil {
			t.Fatal(err)
		}
		holding, release := make(chan struct{}), make(chan struct{})
		held := make(chan error, 1)
		go func() {
			held <- d.inTx(ctx, func(ctx context.Context, tx conn) error {
				if _, err := tx.exec(ctx, `UPDATE usage SET bytes = 2 WHERE owner_id = $1`, o.ID); err != nil {
					close(holding)
					return err
				}
				close(holding)
				<-release
				return nil
			})
		}()
		<-holding
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := d.Reserve(short, o, Amount{1, 0}, Amount{100, 100})
		waited := time.Since(start)
		close(release)
		if err := <-held; err != nil {
			t.Fatal(err)
		}
		if err == nil || !errors.Is(short.Err(), context.DeadlineExceeded) {
			t.Fatalf("Reserve behind a held row = %v, want an error at the deadline", err)
		}
		if waited > 3*time.Second {
			t.Errorf("Reserve returned after %v, long past its 300ms deadline", waited)
		}
	})
}

// TestStatementDeadlineWithoutCallerDeadline: a context without a deadline still gets
// stmtTimeout (the audit writer and the sweeps pass such contexts).
func TestStatementDeadlineWithoutCallerDeadline(t *testing.T) {
	t.Parallel()
	d := openTest(t, SQLite)
	ctx, cancel := d.bound(context.Background())
	defer cancel()
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > stmtTimeout {
		t.Errorf("deadline %v (%v), want within %v", dl, ok, stmtTimeout)
	}
	early, cancelEarly := context.WithTimeout(context.Background(), time.Second)
	defer cancelEarly()
	ctx, cancel2 := d.bound(early)
	defer cancel2()
	if dl, _ := ctx.Deadline(); time.Until(dl) > time.Second {
		t.Errorf("the caller's earlier deadline was not kept: %v", dl)
	}
}

// TestUnavailable tells a refused or failed connection (retry later) from a request
// PostgreSQL rejected (a fault): a server nobody listens on, a role out of connections, a
// bad statement and a serialization failure, each from a real connection.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nobody listens there now
	closed, err := sql.Open("pgx", fmt.Sprintf("postgres://u@127.0.0.1:%d/x?sslmode=disable&connect_timeout=5", port))
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Close()
	if err := closed.PingContext(ctx); err == nil || !Unavailable(err) {
		t.Errorf("connection refused: Unavailable(%v) is false", err)
	}
	admin, err := sql.Open("pgx", pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "SELEC 1"); err == nil || Unavailable(err) {
		t.Errorf("a syntax error: Unavailable(%v) is true", err)
	}
	if _, err := admin.ExecContext(ctx, "DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '40001'; END $$"); err == nil || Unavailable(err) {
		t.Errorf("a serialization failure: Unavailable(%v) is true", err)
	}
	if _, err := admin.ExecContext(ctx, "DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '53300'; END $$"); err == nil || !Unavailable(err) {
		t.Errorf("too many connections: Unavailable(%v) is false", err)
	}
}
