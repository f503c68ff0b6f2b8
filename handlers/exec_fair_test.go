package handlers_test

import (
	"sync"
	"testing"
	"time"
)

// asUser are the headers of a user in auth mode headers.
func asUser(key, user string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": user}
}

// TestExecFairShare (issue 9 finding 6): with exec_max_per_user 2, alice's four parallel
// sleeps run two at a time and the others get TOO_MANY_COMMANDS after a short wait, while
// bob's shed_tree and his own command answer at once.
func TestExecFairShare(t *testing.T) {
	const key = "k-0123456789abcdef0123456789abcdef"
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key, "FILESHED_EXEC_MAX_PER_USER": "2"})
	alice, bob := asUser(key, "alice"), asUser(key, "bob")
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, bob))
	var wg sync.WaitGroup
	replies := make([]reply, 4)
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = e.post("shed_exec", execCall{"zone": "storage", "cmd": "sleep", "args": []string{"3"}}, alice)
		}()
	}
	time.Sleep(300 * time.Millisecond) // alice's share is taken
	t0 := time.Now()
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, bob))
	tree := time.Since(t0)
	t0 = time.Now()
	r := e.post("shed_exec", execCall{"zone": "storage", "cmd": "echo", "args": []string{"bob"}}, bob)
	echo := time.Since(t0)
	wantOK(t, r)
	if tree > 500*time.Millisecond || echo > time.Second {
		t.Fatalf("bob waited: shed_tree %v, shed_exec echo %v", tree, echo)
	}
	wg.Wait()
	ok, refused := 0, 0
	for _, r := range replies {
		switch {
		case r.Success:
			ok++
		case r.Error == "TOO_MANY_COMMANDS":
			refused++
			if r.Details["max_per_user"] != 2.0 || r.Details["running_yours"] != 2.0 {
				t.Errorf("details: %s", r.raw)
			}
		default:
			t.Errorf("unexpected: %s", r.raw)
		}
	}
	if ok != 2 || refused != 2 {
		t.Fatalf("%d ran, %d refused; want 2 and 2", ok, refused)
	}
}

// TestExecMemoryBoundsTotal: exec_memory_total_mb 1024 with 512 MB per command lets two
// commands run at once on the whole server, whoever runs them; a third user is refused.
func TestExecMemoryBoundsTotal(t *testing.T) {
	const key = "k-0123456789abcdef0123456789abcdef"
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key,
		"FILESHED_EXEC_MEMORY_LIMIT_MB": "512", "FILESHED_EXEC_MEMORY_TOTAL_MB": "1024"})
	var wg sync.WaitGroup
	for _, u := range []string{"alice", "bob"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wantOK(t, e.post("shed_exec", execCall{"zone": "storage", "cmd": "sleep", "args": []string{"3"}}, asUser(key, u)))
		}()
	}
	time.Sleep(300 * time.Millisecond)
	r := e.post("shed_exec", execCall{"zone": "storage", "cmd": "echo", "args": []string{"carol"}}, asUser(key, "carol"))
	wantError(t, r, "TOO_MANY_COMMANDS")
	if r.Details["max_total"] != 2.0 || r.Details["running_yours"] != 0.0 {
		t.Fatalf("details: %s", r.raw)
	}
	wg.Wait()
}
