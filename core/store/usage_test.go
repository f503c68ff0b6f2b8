package store

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
)

const mb = 1 << 20

func TestReserve(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		alice := Owner{"user", "alice"}
		b := func(n int64) Amount { return Amount{Bytes: n} }
		lim := Amount{100, 10}
		cases := []struct {
			name         string
			owner        Owner
			start        Amount // usage set before the call (zero: no row at all)
			delta, limit Amount
			wantQuota    *QuotaError
			wantErr      bool
			wantUsage    Amount
		}{
			{name: "first reservation creates the row", owner: alice, delta: Amount{10, 1}, limit: lim, wantUsage: Amount{10, 1}},
			{name: "under limit", owner: alice, start: Amount{50, 5}, delta: Amount{10, 1}, limit: lim, wantUsage: Amount{60, 6}},
			{name: "exactly at limit", owner: alice, start: Amount{90, 9}, delta: Amount{10, 1}, limit: lim, wantUsage: Amount{100, 10}},
			{name: "nothing under limit", owner: alice, start: Amount{90, 9}, limit: lim, wantUsage: Amount{90, 9}},
			{name: "over limit by one byte", owner: alice, start: Amount{91, 1}, delta: b(10), limit: lim,
				wantQuota: &QuotaError{Used: Amount{91, 1}, Requested: b(10), Limit: lim}, wantUsage: Amount{91, 1}},
			{name: "over the file limit by one", owner: alice, start: Amount{5, 10}, delta: Amount{0, 1}, limit: lim,
				wantQuota: &QuotaError{Used: Amount{5, 10}, Requested: Amount{0, 1}, Limit: lim}, wantUsage: Amount{5, 10}},
			{name: "bytes fit, files do not", owner: alice, start: Amount{5, 9}, delta: Amount{1, 2}, limit: lim,
				wantQuota: &QuotaError{Used: Amount{5, 9}, Requested: Amount{1, 2}, Limit: lim}, wantUsage: Amount{5, 9}},
			{name: "delta alone exceeds limit", owner: alice, delta: b(101), limit: lim,
				wantQuota: &QuotaError{Used: Amount{}, Requested: b(101), Limit: lim}},
			{name: "files alone exceed limit", owner: alice, delta: Amount{0, 11}, limit: lim,
				wantQuota: &QuotaError{Used: Amount{}, Requested: Amount{0, 11}, Limit: lim}},
			{name: "over a lowered file limit, bytes still grow", owner: alice, start: Amount{5, 20}, delta: b(10), limit: lim,
				wantUsage: Amount{15, 20}},
			{name: "over a lowered byte limit, an empty file still fits", owner: alice, start: Amount{200, 1}, delta: Amount{0, 1},
				limit: lim, wantUsage: Amount{200, 2}},
			{name: "huge delta does not overflow", owner: alice, start: b(5), delta: Amount{maxBytes, maxBytes}, limit: Amount{maxBytes, maxBytes},
				wantQuota: &QuotaError{Used: b(5), Requested: Amount{maxBytes, maxBytes}, Limit: Amount{maxBytes, maxBytes}}, wantUsage: b(5)},
			{name: "delta beyond bound", owner: alice, delta: b(math.MaxInt64), limit: b(math.MaxInt64), wantErr: true},
			{name: "files beyond bound", owner: alice, delta: Amount{0, math.MaxInt64}, limit: lim, wantErr: true},
			{name: "negative delta", owner: alice, start: b(5), delta: b(-1), limit: lim, wantErr: true, wantUsage: b(5)},
			{name: "negative files", owner: alice, start: b(5), delta: Amount{0, -1}, limit: lim, wantErr: true, wantUsage: b(5)},
			{name: "negative limit", owner: alice, delta: b(1), limit: Amount{-1, 10}, wantErr: true},
			{name: "unknown owner kind", owner: Owner{"admin", "alice"}, delta: b(1), limit: lim, wantErr: true},
			{name: "empty owner id", owner: Owner{"user", ""}, delta: b(1), limit: lim, wantErr: true},
			{name: "injection in id is just an id", owner: Owner{"group", "x'); DROP TABLE usage; --"},
				delta: Amount{7, 1}, limit: lim, wantUsage: Amount{7, 1}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := openTest(t, drv)
				ctx := context.Background()
				if tc.start != (Amount{}) {
					if err := d.SetUsage(ctx, tc.owner, tc.start); err != nil {
						t.Fatal(err)
					}
				}
				err := d.Reserve(ctx, tc.owner, tc.delta, tc.limit)
				var qe *QuotaError
				switch {
				case tc.wantQuota != nil:
					if !errors.As(err, &qe) || *qe != *tc.wantQuota {
						t.Fatalf("Reserve = %v, want %v", err, tc.wantQuota)
					}
				case tc.wantErr:
					if err == nil || errors.As(err, &qe) {
						t.Fatalf("Reserve = %v, want a plain error", err)
					}
				case err != nil:
					t.Fatalf("Reserve: %v", err)
				}
				if tc.owner.validate() != nil {
					return
				}
				if got, err := d.Usage(ctx, tc.owner); err != nil || got != tc.wantUsage {
					t.Errorf("usage = %+v, %v; want %+v", got, err, tc.wantUsage)
				}
			})
		}
	})
}

func TestQuotaErrorMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		e     QuotaError
		files bool
		want  string
	}{
		{QuotaError{Used: Amount{91, 1}, Requested: Amount{10, 0}, Limit: Amount{100, 10}}, false,
			"quota exceeded: 91 bytes used + 10 requested > limit 100"},
		{QuotaError{Used: Amount{5, 10}, Requested: Amount{0, 1}, Limit: Amount{100, 10}}, true,
			"quota exceeded: 10 files used + 1 requested > limit 10"},
	}
	for _, tc := range cases {
		if got := tc.e.Error(); got != tc.want || tc.e.Files() != tc.files {
			t.Errorf("Error() = %q, Files() = %v; want %q, %v", got, tc.e.Files(), tc.want, tc.files)
		}
	}
}

// TestConcurrentReservationsNeverOvershoot is the regression test for the original's
// check-then-write quota: 200 writers of 1 MB against a 100 MB limit, then 200 writers of 3
// files against a 300-file limit (issue 24 finding 7: the file count is reserved alike), on
// both drivers: on PostgreSQL the conditional upsert locks the row and re-checks its WHERE.
func TestConcurrentReservationsNeverOvershoot(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		const writers, fit = 200, 100
		cases := []struct {
			name         string
			delta, limit Amount
			want         Amount
		}{
			{"bytes", Amount{mb, 0}, Amount{fit * mb, 1000}, Amount{fit * mb, 0}},
			{"files", Amount{1, 3}, Amount{fit * mb, 3 * fit}, Amount{fit, 3 * fit}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := openTest(t, drv)
				ctx := context.Background()
				g := Owner{"group", "team"}
				var ok, refused atomic.Int32
				var wg sync.WaitGroup
				start := make(chan struct{})
				for range writers {
					wg.Go(func() {
						<-start
						err := d.Reserve(ctx, g, tc.delta, tc.limit)
						var qe *QuotaError
						switch {
						case err == nil:
							ok.Add(1)
						case errors.As(err, &qe):
							refused.Add(1)
						default:
							t.Errorf("Reserve: %v", err)
						}
					})
				}
				close(start)
				wg.Wait()
				if ok.Load() != fit || refused.Load() != writers-fit {
					t.Errorf("%d succeeded and %d were refused, want %d and %d", ok.Load(), refused.Load(), fit, writers-fit)
				}
				if got, _ := d.Usage(ctx, g); got != tc.want {
					t.Errorf("usage = %+v, want %+v", got, tc.want)
				}
			})
		}
	})
}

func TestAdjust(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		bob := Owner{"user", "bob"}
		cases := []struct {
			name      string
			owner     Owner
			start     Amount
			deltas    []Amount
			wantUsage Amount
			wantErr   bool
		}{
			{name: "grow", owner: bob, start: Amount{10, 2}, deltas: []Amount{{5, 1}}, wantUsage: Amount{15, 3}},
			{name: "shrink", owner: bob, start: Amount{10, 2}, deltas: []Amount{{-4, -1}}, wantUsage: Amount{6, 1}},
			{name: "negative floors at zero", owner: bob, start: Amount{10, 2}, deltas: []Amount{{-25, -3}}, wantUsage: Amount{}},
			{name: "negative on missing row stays zero", owner: bob, deltas: []Amount{{-25, -25}}, wantUsage: Amount{}},
			{name: "floor then grow", owner: bob, start: Amount{3, 3}, deltas: []Amount{{-10, -10}, {4, 2}}, wantUsage: Amount{4, 2}},
			{name: "bytes and files move apart", owner: bob, start: Amount{10, 10}, deltas: []Amount{{5, -3}}, wantUsage: Amount{15, 7}},
			{name: "no limit check", owner: bob, start: Amount{10, 10}, deltas: []Amount{{maxBytes - 10, maxBytes - 10}}, wantUsage: Amount{maxBytes, maxBytes}},
			{name: "saturates at the bound", owner: bob, start: Amount{10, 10}, deltas: []Amount{{maxBytes, maxBytes}, {maxBytes, maxBytes}},
				wantUsage: Amount{maxBytes, maxBytes}},
			{name: "most negative int64 refused", owner: bob, start: Amount{10, 1}, deltas: []Amount{{math.MinInt64, 0}}, wantUsage: Amount{10, 1}, wantErr: true},
			{name: "largest int64 refused", owner: bob, start: Amount{10, 1}, deltas: []Amount{{math.MaxInt64, 0}}, wantUsage: Amount{10, 1}, wantErr: true},
			{name: "largest file count refused", owner: bob, start: Amount{10, 1}, deltas: []Amount{{0, math.MaxInt64}}, wantUsage: Amount{10, 1}, wantErr: true},
			{name: "unknown owner kind", owner: Owner{"", "bob"}, deltas: []Amount{{1, 1}}, wantErr: true},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := openTest(t, drv)
				ctx := context.Background()
				if tc.start != (Amount{}) {
					if err := d.SetUsage(ctx, tc.owner, tc.start); err != nil {
						t.Fatal(err)
					}
				}
				var err error
				for _, delta := range tc.deltas {
					if err = d.Adjust(ctx, tc.owner, delta); err != nil {
						break
					}
				}
				if (err != nil) != tc.wantErr {
					t.Fatalf("Adjust error = %v, want error %v", err, tc.wantErr)
				}
				if tc.owner.validate() != nil {
					return
				}
				if got, err := d.Usage(ctx, tc.owner); err != nil || got != tc.wantUsage {
					t.Errorf("usage = %+v, %v; want %+v", got, err, tc.wantUsage)
				}
			})
		}
	})
}

func TestSetUsage(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		cases := []struct {
			name    string
			usage   Amount
			wantErr bool
		}{
			{"zero", Amount{}, false},
			{"measured", Amount{12345, 17}, false},
			{"bound", Amount{maxBytes, maxBytes}, false},
			{"negative", Amount{-1, 0}, true},
			{"negative files", Amount{0, -1}, true},
			{"beyond bound", Amount{maxBytes + 1, 0}, true},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := openTest(t, drv)
				ctx := context.Background()
				o := Owner{"group", "g"}
				if err := d.SetUsage(ctx, o, Amount{77, 7}); err != nil {
					t.Fatal(err)
				}
				err := d.SetUsage(ctx, o, tc.usage)
				if (err != nil) != tc.wantErr {
					t.Fatalf("SetUsage error = %v, want error %v", err, tc.wantErr)
				}
				want := tc.usage
				if tc.wantErr {
					want = Amount{77, 7}
				}
				if got, _ := d.Usage(ctx, o); got != want {
					t.Errorf("usage = %+v, want %+v", got, want)
				}
			})
		}
	})
}

// TestMigrationAddsFileCountToExistingRows: a state database written before the file count
// keeps its bytes, and its rows start at 0 files (reconciled at first use).
func TestMigrationAddsFileCountToExistingRows(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		src := testSource(t, drv)
		d, err := OpenSource(src)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		// Back to schema 4, with one usage row as a release before the file count wrote it.
		for _, stmt := range []string{`DROP TABLE usage`, `DROP TABLE group_members`, `DROP TABLE server_keys`, `DROP TABLE replicas`, `DROP TABLE replica_owners`, `DROP TABLE state_identity`, `DROP TABLE commands`, `DROP TABLE journal`, `DELETE FROM schema_migrations WHERE version >= 5`,
			`CREATE TABLE usage (owner_kind TEXT NOT NULL CHECK (owner_kind IN ('user', 'group')), owner_id TEXT NOT NULL,
			bytes BIGINT NOT NULL DEFAULT 0 CHECK (bytes >= 0), PRIMARY KEY (owner_kind, owner_id))`,
			`INSERT INTO usage (owner_kind, owner_id, bytes) VALUES ('user', 'old', 4242)`} {
			if _, err := d.sql.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		d.Close()
		if d, err = OpenSource(src); err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if got, err := d.Usage(ctx, Owner{"user", "old"}); err != nil || got != (Amount{4242, 0}) {
			t.Fatalf("usage after migration = %+v, %v", got, err)
		}
	})
}

// A user and a group with the same id are different owners (an id reused across kinds must
// not share a quota).
func TestUsageSeparatesUserAndGroupWithSameID(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		lim := Amount{50, 5}
		if err := d.Reserve(ctx, Owner{"user", "same"}, Amount{40, 4}, lim); err != nil {
			t.Fatal(err)
		}
		if err := d.Reserve(ctx, Owner{"group", "same"}, Amount{40, 4}, lim); err != nil {
			t.Fatalf("group reservation charged to the user: %v", err)
		}
		if got, _ := d.Usage(ctx, Owner{"user", "same"}); got != (Amount{40, 4}) {
			t.Errorf("user usage = %+v, want 40 bytes, 4 files", got)
		}
	})
}

// BenchmarkReserveAdjust is one write's quota round trip (reserve, then settle) on each
// driver: BENCHMARKS.md compares them.
func BenchmarkReserveAdjust(b *testing.B) {
	for _, drv := range drivers {
		b.Run(drv, func(b *testing.B) {
			d := openTest(b, drv)
			ctx := context.Background()
			o := Owner{"user", "bench"}
			for b.Loop() {
				if err := d.Reserve(ctx, o, Amount{4096, 1}, Amount{10 * mb, 1000}); err != nil {
					b.Fatal(err)
				}
				if err := d.Adjust(ctx, o, Amount{-4096, -1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReserveAdjustParallel(b *testing.B) {
	for _, drv := range drivers {
		b.Run(drv, func(b *testing.B) {
			d := openTest(b, drv)
			ctx := context.Background()
			var n atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				o := Owner{"user", "bench" + string(rune('a'+n.Add(1)))}
				for pb.Next() {
					if err := d.Reserve(ctx, o, Amount{4096, 1}, Amount{10 * mb, 1000}); err != nil {
						b.Error(err)
						return
					}
					if err := d.Adjust(ctx, o, Amount{-4096, -1}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
