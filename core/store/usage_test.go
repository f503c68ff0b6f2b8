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
	alice := Owner{"user", "alice"}
	cases := []struct {
		name         string
		owner        Owner
		start        int64 // usage set before the call (0: no row at all)
		delta, limit int64
		wantQuota    *QuotaError
		wantErr      bool
		wantUsage    int64
	}{
		{name: "first reservation creates the row", owner: alice, delta: 10, limit: 100, wantUsage: 10},
		{name: "under limit", owner: alice, start: 50, delta: 10, limit: 100, wantUsage: 60},
		{name: "exactly at limit", owner: alice, start: 90, delta: 10, limit: 100, wantUsage: 100},
		{name: "zero bytes under limit", owner: alice, start: 90, delta: 0, limit: 100, wantUsage: 90},
		{name: "over limit by one", owner: alice, start: 91, delta: 10, limit: 100,
			wantQuota: &QuotaError{Used: 91, Requested: 10, Limit: 100}, wantUsage: 91},
		{name: "delta alone exceeds limit", owner: alice, delta: 101, limit: 100,
			wantQuota: &QuotaError{Used: 0, Requested: 101, Limit: 100}},
		{name: "already over a lowered limit", owner: alice, start: 200, delta: 0, limit: 100,
			wantQuota: &QuotaError{Used: 200, Requested: 0, Limit: 100}, wantUsage: 200},
		{name: "huge delta does not overflow", owner: alice, start: 5, delta: maxBytes, limit: maxBytes,
			wantQuota: &QuotaError{Used: 5, Requested: maxBytes, Limit: maxBytes}, wantUsage: 5},
		{name: "delta beyond bound", owner: alice, delta: math.MaxInt64, limit: math.MaxInt64, wantErr: true},
		{name: "negative delta", owner: alice, start: 5, delta: -1, limit: 100, wantErr: true, wantUsage: 5},
		{name: "negative limit", owner: alice, delta: 1, limit: -1, wantErr: true},
		{name: "unknown owner kind", owner: Owner{"admin", "alice"}, delta: 1, limit: 100, wantErr: true},
		{name: "empty owner id", owner: Owner{"user", ""}, delta: 1, limit: 100, wantErr: true},
		{name: "injection in id is just an id", owner: Owner{"group", "x'); DROP TABLE usage; --"},
			delta: 7, limit: 100, wantUsage: 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := openTest(t)
			ctx := context.Background()
			if tc.start != 0 {
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
				t.Errorf("usage = %d, %v; want %d", got, err, tc.wantUsage)
			}
		})
	}
}

func TestQuotaErrorMessage(t *testing.T) {
	e := &QuotaError{Used: 91, Requested: 10, Limit: 100}
	if got, want := e.Error(), "quota exceeded: 91 bytes used + 10 requested > limit 100"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestConcurrentReservationsNeverOvershoot is the regression test for the original's
// check-then-write quota: 50 writers of 1 MB against a 10 MB limit.
func TestConcurrentReservationsNeverOvershoot(t *testing.T) {
	d := openTest(t)
	ctx := context.Background()
	g := Owner{"group", "team"}
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 50 {
		wg.Go(func() {
			<-start
			err := d.Reserve(ctx, g, mb, 10*mb)
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
	if ok.Load() != 10 || refused.Load() != 40 {
		t.Errorf("%d succeeded and %d were refused, want 10 and 40", ok.Load(), refused.Load())
	}
	if got, _ := d.Usage(ctx, g); got != 10*mb {
		t.Errorf("usage = %d, want %d", got, 10*mb)
	}
}

func TestAdjust(t *testing.T) {
	bob := Owner{"user", "bob"}
	cases := []struct {
		name      string
		owner     Owner
		start     int64
		deltas    []int64
		wantUsage int64
		wantErr   bool
	}{
		{name: "grow", owner: bob, start: 10, deltas: []int64{5}, wantUsage: 15},
		{name: "shrink", owner: bob, start: 10, deltas: []int64{-4}, wantUsage: 6},
		{name: "negative floors at zero", owner: bob, start: 10, deltas: []int64{-25}, wantUsage: 0},
		{name: "negative on missing row stays zero", owner: bob, deltas: []int64{-25}, wantUsage: 0},
		{name: "floor then grow", owner: bob, start: 3, deltas: []int64{-10, 4}, wantUsage: 4},
		{name: "no limit check", owner: bob, start: 10, deltas: []int64{maxBytes - 10}, wantUsage: maxBytes},
		{name: "saturates at the bound", owner: bob, start: 10, deltas: []int64{maxBytes, maxBytes}, wantUsage: maxBytes},
		{name: "most negative int64 refused", owner: bob, start: 10, deltas: []int64{math.MinInt64}, wantUsage: 10, wantErr: true},
		{name: "largest int64 refused", owner: bob, start: 10, deltas: []int64{math.MaxInt64}, wantUsage: 10, wantErr: true},
		{name: "unknown owner kind", owner: Owner{"", "bob"}, deltas: []int64{1}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := openTest(t)
			ctx := context.Background()
			if tc.start != 0 {
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
				t.Errorf("usage = %d, %v; want %d", got, err, tc.wantUsage)
			}
		})
	}
}

func TestSetUsage(t *testing.T) {
	cases := []struct {
		name    string
		bytes   int64
		wantErr bool
	}{
		{"zero", 0, false},
		{"measured", 12345, false},
		{"bound", maxBytes, false},
		{"negative", -1, true},
		{"beyond bound", maxBytes + 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := openTest(t)
			ctx := context.Background()
			o := Owner{"group", "g"}
			if err := d.SetUsage(ctx, o, 77); err != nil {
				t.Fatal(err)
			}
			err := d.SetUsage(ctx, o, tc.bytes)
			if (err != nil) != tc.wantErr {
				t.Fatalf("SetUsage error = %v, want error %v", err, tc.wantErr)
			}
			want := tc.bytes
			if tc.wantErr {
				want = 77
			}
			if got, _ := d.Usage(ctx, o); got != want {
				t.Errorf("usage = %d, want %d", got, want)
			}
		})
	}
}

// A user and a group with the same id are different owners (an id reused across kinds must
// not share a quota).
func TestUsageSeparatesUserAndGroupWithSameID(t *testing.T) {
	d := openTest(t)
	ctx := context.Background()
	if err := d.Reserve(ctx, Owner{"user", "same"}, 40, 50); err != nil {
		t.Fatal(err)
	}
	if err := d.Reserve(ctx, Owner{"group", "same"}, 40, 50); err != nil {
		t.Fatalf("group reservation charged to the user: %v", err)
	}
	if got, _ := d.Usage(ctx, Owner{"user", "same"}); got != 40 {
		t.Errorf("user usage = %d, want 40", got)
	}
}

func BenchmarkReserveAdjust(b *testing.B) {
	d := openTest(b)
	ctx := context.Background()
	o := Owner{"user", "bench"}
	for b.Loop() {
		if err := d.Reserve(ctx, o, 4096, 10*mb); err != nil {
			b.Fatal(err)
		}
		if err := d.Adjust(ctx, o, -4096); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReserveAdjustParallel(b *testing.B) {
	d := openTest(b)
	ctx := context.Background()
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		o := Owner{"user", "bench" + string(rune('a'+n.Add(1)))}
		for pb.Next() {
			if err := d.Reserve(ctx, o, 4096, 10*mb); err != nil {
				b.Error(err)
				return
			}
			if err := d.Adjust(ctx, o, -4096); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
