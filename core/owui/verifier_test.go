package owui_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

const authPath = "/api/v1/auths/"

func newVerifier(t *testing.T, ttl time.Duration) (*owuitest.Server, *owui.Verifier) {
	t.Helper()
	s := world(t)
	return s, owui.NewVerifier(owui.New(s.URL, 2*time.Second), ttl)
}

func TestVerifierCachesSequentialCalls(t *testing.T) {
	s, v := newVerifier(t, time.Minute)
	for i := range 10 {
		u, err := v.Verify(context.Background(), aliceToken)
		if err != nil || u != alice {
			t.Fatalf("call %d: Verify = %+v, %v", i, u, err)
		}
	}
	if n := s.Calls(authPath); n != 1 {
		t.Fatalf("upstream calls = %d, want 1", n)
	}
}

func TestVerifierCoalescesConcurrentCalls(t *testing.T) {
	s, v := newVerifier(t, time.Minute)
	s.SetDelay(100 * time.Millisecond) // keep the first check in flight while the others arrive
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			u, err := v.Verify(context.Background(), bobToken)
			if err == nil && u != bob {
				err = fmt.Errorf("got %+v", u)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := s.Calls(authPath); n != 1 {
		t.Fatalf("upstream calls = %d, want 1", n)
	}
}

func TestVerifierExpires(t *testing.T) {
	s, v := newVerifier(t, 50*time.Millisecond)
	for range 2 {
		if _, err := v.Verify(context.Background(), aliceToken); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := v.Verify(context.Background(), aliceToken); err != nil {
		t.Fatal(err)
	}
	if n := s.Calls(authPath); n != 2 {
		t.Fatalf("upstream calls = %d, want 2 (one before, one after expiry)", n)
	}
}

func TestVerifierZeroTTLDoesNotCache(t *testing.T) {
	s, v := newVerifier(t, 0)
	for range 3 {
		if _, err := v.Verify(context.Background(), aliceToken); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Calls(authPath); n != 3 {
		t.Fatalf("upstream calls = %d, want 3", n)
	}
}

// A wrong token must never be answered from another token's cache entry,
// and a failure must not stick once Open WebUI would accept the token.
func TestVerifierDoesNotCacheFailures(t *testing.T) {
	tests := []struct {
		name  string
		token string
		down  bool
		want  error
	}{
		{name: "unknown token", token: "late-token", want: owui.ErrUnauthorized},
		{name: "near miss of a cached token", token: aliceToken + "x", want: owui.ErrUnauthorized},
		{name: "server down", token: "late-token", down: true, want: owui.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, v := newVerifier(t, time.Minute)
			if _, err := v.Verify(context.Background(), aliceToken); err != nil {
				t.Fatal(err)
			}
			s.SetDown(tt.down)
			for range 2 {
				_, err := v.Verify(context.Background(), tt.token)
				checkErr(t, err, tt.want, tt.token)
			}
			s.SetDown(false)
			s.AddUser(tt.token, bob)
			if u, err := v.Verify(context.Background(), tt.token); err != nil || u != bob {
				t.Fatalf("after the token became valid: Verify = %+v, %v", u, err)
			}
			if n := s.Calls(authPath); n != 4 {
				t.Fatalf("upstream calls = %d, want 4 (no failure cached)", n)
			}
		})
	}
}

func TestVerifierEvictsOldestWhenFull(t *testing.T) {
	s, v := newVerifier(t, time.Minute)
	owui.SetMaxEntries(v, 3)
	for i := range 4 {
		token := fmt.Sprintf("token-%d", i)
		s.AddUser(token, owui.User{ID: fmt.Sprintf("u%d", i), Role: "user"})
		if _, err := v.Verify(context.Background(), token); err != nil {
			t.Fatal(err)
		}
	}
	if n := owui.CacheLen(v); n != 3 {
		t.Fatalf("cache holds %d entries, want 3", n)
	}
	for _, token := range []string{"token-3", "token-2", "token-1"} { // still cached
		if _, err := v.Verify(context.Background(), token); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Calls(authPath); n != 4 {
		t.Fatalf("upstream calls = %d, want 4 (recent tokens cached)", n)
	}
	if _, err := v.Verify(context.Background(), "token-0"); err != nil { // evicted
		t.Fatal(err)
	}
	if n := s.Calls(authPath); n != 5 {
		t.Fatalf("upstream calls = %d, want 5 (oldest token evicted)", n)
	}
}

// One impatient caller gives up; the shared check still serves the others. The upstream
// answer is held until the impatient caller has returned: it never waited for the check.
func TestVerifierCallerDeadlineDoesNotFailOthers(t *testing.T) {
	s, v := newVerifier(t, time.Minute)
	s.SetDelay(time.Hour)
	done := make(chan error, 1)
	go func() {
		_, err := v.Verify(context.Background(), aliceToken)
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := v.Verify(ctx, aliceToken)
	if !errors.Is(err, owui.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("impatient caller: error = %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("the patient caller answered (%v) before the held upstream answer", err)
	default:
	}
	s.SetDelay(0) // the upstream answers now
	if err := <-done; err != nil {
		t.Fatalf("patient caller: %v", err)
	}
	if n := s.Calls(authPath); n != 1 {
		t.Fatalf("upstream calls = %d, want 1", n)
	}
}

func TestVerifierRejectsHostileTokenWithoutRequest(t *testing.T) {
	v := owui.NewVerifier(owui.New(tripwire(t), time.Second), time.Minute)
	for _, token := range []string{"", "a\r\nb", "a b", "\x00"} {
		_, err := v.Verify(context.Background(), token)
		checkErr(t, err, owui.ErrUnauthorized, "")
	}
}

// BenchmarkVerifyCached measures a cache hit: hashing the token plus a map lookup.
func BenchmarkVerifyCached(b *testing.B) {
	s := owuitest.New(b)
	s.AddUser(aliceToken, alice)
	v := owui.NewVerifier(owui.New(s.URL, time.Second), time.Hour)
	if _, err := v.Verify(context.Background(), aliceToken); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := v.Verify(context.Background(), aliceToken); err != nil {
				b.Error(err)
			}
		}
	})
}

// BenchmarkVerifyUpstream measures an uncached check against the local fake.
func BenchmarkVerifyUpstream(b *testing.B) {
	s := owuitest.New(b)
	s.AddUser(aliceToken, alice)
	v := owui.NewVerifier(owui.New(s.URL, time.Second), 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(context.Background(), aliceToken); err != nil {
			b.Fatal(err)
		}
	}
}
