package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestAcquireLock(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		held := Lock{ZoneKey: "users/alice/Documents", Path: "a.txt", UserID: "alice", ConvID: "chat-1", Since: t0}
		cases := []struct {
			name    string
			req     Lock
			maxAge  time.Duration
			want    Lock // the lock stored afterwards
			wantErr error
			plain   bool // a plain (validation) error is expected
		}{
			{name: "free path", maxAge: time.Hour,
				req:  Lock{ZoneKey: held.ZoneKey, Path: "b.txt", UserID: "bob", ConvID: "chat-2", Since: t0},
				want: Lock{ZoneKey: held.ZoneKey, Path: "b.txt", UserID: "bob", ConvID: "chat-2", Since: t0}},
			{name: "other conversation is refused", maxAge: time.Hour,
				req:  Lock{ZoneKey: held.ZoneKey, Path: "a.txt", UserID: "alice", ConvID: "chat-2", Since: t0.Add(time.Minute)},
				want: held, wantErr: ErrLocked},
			{name: "same conversation of another user is refused", maxAge: time.Hour,
				req:  Lock{ZoneKey: held.ZoneKey, Path: "a.txt", UserID: "mallory", ConvID: "chat-1", Since: t0.Add(time.Minute)},
				want: held, wantErr: ErrLocked},
			{name: "same holder refreshes", maxAge: time.Hour,
				req:  Lock{ZoneKey: held.ZoneKey, Path: "a.txt", UserID: "alice", ConvID: "chat-1", Since: t0.Add(time.Minute)},
				want: Lock{ZoneKey: held.ZoneKey, Path: "a.txt", UserID: "alice", ConvID: "chat-1", Since: t0.Add(time.Minute)}},
			{name: "expired lock is taken over", maxAge: time.Hour,
				req:  Lock{ZoneKey: held.ZoneKey, Path: "a.txt", UserID: "bob", ConvID: "chat-2", Since: t0.Add(time.Hour + time.Microsecond)},
				want: Lock{ZoneKey: held.ZoneKey, Path: "a.txt", UserID: "bob", ConvID: "chat-2", Since: t0.Add(time.Hour + time.Microsecond)}},
			{name: "lock exactly maxAge old still holds", maxAge: time.Hour,
				req:  Lock{ZoneKey: held.ZoneKey, Path: "a.txt", UserID: "bob", ConvID: "chat-2", Since: t0.Add(time.Hour)},
				want: held, wantErr: ErrLocked},
			{name: "zero maxAge never expires", maxAge: 0,
				req:  Lock{ZoneKey: held.ZoneKey, Path: "a.txt", UserID: "bob", ConvID: "chat-2", Since: t0.Add(1000 * time.Hour)},
				want: held, wantErr: ErrLocked},
			{name: "huge maxAge does not wrap around", maxAge: math.MaxInt64,
				req:  Lock{ZoneKey: held.ZoneKey, Path: "a.txt", UserID: "bob", ConvID: "chat-2", Since: t0.Add(time.Minute)},
				want: held, wantErr: ErrLocked},
			{name: "same path in another zone is independent", maxAge: time.Hour,
				req:  Lock{ZoneKey: "groups/team", Path: "a.txt", UserID: "bob", ConvID: "chat-2", Since: t0},
				want: Lock{ZoneKey: "groups/team", Path: "a.txt", UserID: "bob", ConvID: "chat-2", Since: t0}},
			{name: "paths differing in case are different", maxAge: time.Hour,
				req:  Lock{ZoneKey: held.ZoneKey, Path: "A.TXT", UserID: "bob", ConvID: "chat-2", Since: t0},
				want: Lock{ZoneKey: held.ZoneKey, Path: "A.TXT", UserID: "bob", ConvID: "chat-2", Since: t0}},
			{name: "empty path", req: Lock{ZoneKey: held.ZoneKey, UserID: "bob", ConvID: "c"}, plain: true},
			{name: "empty zone key", req: Lock{Path: "a.txt", UserID: "bob", ConvID: "c"}, plain: true},
			{name: "empty conversation", req: Lock{ZoneKey: held.ZoneKey, Path: "a.txt", UserID: "bob"}, plain: true},
			{name: "empty user", req: Lock{ZoneKey: held.ZoneKey, Path: "a.txt", ConvID: "c"}, plain: true},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := openTest(t, drv)
				ctx := context.Background()
				if _, err := d.AcquireLock(ctx, held, time.Hour); err != nil {
					t.Fatal(err)
				}
				got, err := d.AcquireLock(ctx, tc.req, tc.maxAge)
				if tc.plain {
					if err == nil || errors.Is(err, ErrLocked) {
						t.Fatalf("AcquireLock = %v, want a validation error", err)
					}
					return
				}
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("AcquireLock error = %v, want %v", err, tc.wantErr)
				}
				if got != tc.want {
					t.Errorf("AcquireLock returned %+v, want %+v", got, tc.want)
				}
				stored, ok, err := d.LockOf(ctx, tc.want.ZoneKey, tc.want.Path)
				if err != nil || !ok || stored != tc.want {
					t.Errorf("LockOf = %+v, %v, %v; want %+v", stored, ok, err, tc.want)
				}
			})
		}
	})
}

func TestAcquireLockDefaultsSinceToNow(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		before := time.Now().Add(-time.Millisecond)
		got, err := d.AcquireLock(context.Background(), Lock{ZoneKey: "z", Path: "p", UserID: "u", ConvID: "c"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if got.Since.Before(before) || got.Since.After(time.Now()) {
			t.Errorf("Since = %v, want about now", got.Since)
		}
	})
}

// TestConcurrentAcquireHasOneWinner is the regression test for the original's check-then-write
// lock files: two conversations racing for the same file, 100 times.
func TestConcurrentAcquireHasOneWinner(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		for round := range 100 {
			path := fmt.Sprintf("f%d.txt", round)
			var wg sync.WaitGroup
			start := make(chan struct{})
			results := make([]Lock, 2)
			errs := make([]error, 2)
			for i := range 2 {
				wg.Go(func() {
					<-start
					results[i], errs[i] = d.AcquireLock(ctx, Lock{ZoneKey: "groups/team", Path: path,
						UserID: fmt.Sprintf("u%d", i), ConvID: fmt.Sprintf("c%d", i)}, time.Hour)
				})
			}
			close(start)
			wg.Wait()
			winners := 0
			for i := range 2 {
				switch {
				case errs[i] == nil:
					winners++
				case !errors.Is(errs[i], ErrLocked):
					t.Fatalf("round %d: %v", round, errs[i])
				case results[i].ConvID == fmt.Sprintf("c%d", i):
					t.Errorf("round %d: loser %d was told it holds the lock", round, i)
				}
			}
			if winners != 1 {
				t.Fatalf("round %d: %d winners, want exactly 1", round, winners)
			}
		}
	})
}

func TestReleaseLock(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		held := Lock{ZoneKey: "z", Path: "a.txt", UserID: "alice", ConvID: "chat-1", Since: t0}
		cases := []struct {
			name, zoneKey, path, convID string
			wantErr                     error
			wantGone                    bool
		}{
			{"holder releases", "z", "a.txt", "chat-1", nil, true},
			{"non-holder is refused", "z", "a.txt", "chat-2", ErrNotHolder, false},
			{"empty conversation is refused", "z", "a.txt", "", ErrNotHolder, false},
			{"wrong zone is refused", "z2", "a.txt", "chat-1", ErrNotHolder, false},
			{"no lock at all", "z", "b.txt", "chat-1", ErrNotHolder, false},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := openTest(t, drv)
				ctx := context.Background()
				if _, err := d.AcquireLock(ctx, held, time.Hour); err != nil {
					t.Fatal(err)
				}
				if err := d.ReleaseLock(ctx, tc.zoneKey, tc.path, tc.convID); !errors.Is(err, tc.wantErr) {
					t.Fatalf("ReleaseLock = %v, want %v", err, tc.wantErr)
				}
				if _, ok, _ := d.LockOf(ctx, "z", "a.txt"); ok == tc.wantGone {
					t.Errorf("lock present = %v after release, want %v", ok, !tc.wantGone)
				}
			})
		}
	})
}

func TestForceReleaseLock(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		for _, p := range []string{"a.txt", "b.txt"} {
			if _, err := d.AcquireLock(ctx, Lock{ZoneKey: "z", Path: p, UserID: "alice", ConvID: "c"}, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.ForceReleaseLock(ctx, "z", "a.txt"); err != nil {
			t.Fatal(err)
		}
		if err := d.ForceReleaseLock(ctx, "z", "missing.txt"); err != nil {
			t.Errorf("force release of a missing lock: %v", err)
		}
		if _, ok, _ := d.LockOf(ctx, "z", "a.txt"); ok {
			t.Error("a.txt still locked")
		}
		if _, ok, _ := d.LockOf(ctx, "z", "b.txt"); !ok {
			t.Error("b.txt lost its lock")
		}
		if _, err := d.AcquireLock(ctx, Lock{ZoneKey: "z", Path: "a.txt", UserID: "bob", ConvID: "c2"}, time.Hour); err != nil {
			t.Errorf("re-acquire after force release: %v", err)
		}
	})
}

func TestExpiredLocksAndLocksByConv(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		locks := []Lock{
			{ZoneKey: "z1", Path: "old.txt", UserID: "u", ConvID: "c1", Since: t0},
			{ZoneKey: "z1", Path: "new.txt", UserID: "u", ConvID: "c1", Since: t0.Add(2 * time.Hour)},
			{ZoneKey: "z1", Path: "other.txt", UserID: "v", ConvID: "c2", Since: t0},
			{ZoneKey: "z2", Path: "a.txt", UserID: "u", ConvID: "c1", Since: t0.Add(time.Hour - time.Microsecond)},
		}
		for _, l := range locks {
			if _, err := d.AcquireLock(ctx, l, 0); err != nil {
				t.Fatal(err)
			}
		}
		expired, err := d.ExpiredLocks(ctx, t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		assertLocks(t, "ExpiredLocks", expired, []Lock{locks[0], locks[2], locks[3]})
		if none, _ := d.ExpiredLocks(ctx, t0); len(none) != 0 {
			t.Errorf("ExpiredLocks(t0) = %+v, want none (strictly before)", none)
		}

		byConv, err := d.LocksByConv(ctx, "z1", "c1")
		if err != nil {
			t.Fatal(err)
		}
		assertLocks(t, "LocksByConv", byConv, []Lock{locks[1], locks[0]})
		if none, _ := d.LocksByConv(ctx, "z1", "c1' OR '1'='1"); len(none) != 0 {
			t.Errorf("injected conversation id matched %+v", none)
		}
	})
}

func assertLocks(t *testing.T, what string, got, want []Lock) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %+v, want %+v", what, got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s[%d] = %+v, want %+v", what, i, got[i], want[i])
		}
	}
}
