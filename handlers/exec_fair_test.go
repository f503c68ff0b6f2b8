package handlers_test

import (
	"sync"
	"sync/atomic"
	"testing"
)

// asUser are the headers of a user in auth mode headers.
func asUser(key, user string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": user}
}

// TestExecFairShare (issue 9 finding 6): with exec_max_per_user 2, alice's four parallel
// sleeps run two at a time and the others get TOO_MANY_COMMANDS after a short wait, while
// bob's shed_tree and his own command answer at once: both before any of alice's running
// commands ends (events, not a clock: issue 34).
func TestExecFairShare(t *testing.T) {
	t.Parallel() // owns its server; waits more than it computes (issue 34)
	const key = "k-0123456789abcdef0123456789abcdef"
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key, "FILESHED_EXEC_MAX_PER_USER": "2"})
	alice, bob := asUser(key, "alice"), asUser(key, "bob")
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, bob))
	var wg sync.WaitGroup
	var ran atomic.Int32 // alice's commands that ran to their end
	replies := make([]reply, 4)
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = e.post("shed_exec", execCall{"zone": "storage", "cmd": "sleep", "args": []string{"3"}}, alice)
			if replies[i].Success {
				ran.Add(1)
			}
		}()
	}
	e.waitMetric(key, "fileshed_commands_running 1") // alice's first command runs (the others wait for her Storage turn or a slot)
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, bob))
	r := e.post("shed_exec", execCall{"zone": "storage", "cmd": "echo", "args": []string{"bob"}}, bob)
	wantOK(t, r)
	if n := ran.Load(); n != 0 {
		t.Fatalf("bob waited: %d of alice's commands ended before his shed_tree and shed_exec answered", n)
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
	t.Parallel() // owns its server; waits more than it computes (issue 34)
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
	e.waitMetric(key, "fileshed_commands_running 2")
	r := e.post("shed_exec", execCall{"zone": "storage", "cmd": "echo", "args": []string{"carol"}}, asUser(key, "carol"))
	wantError(t, r, "TOO_MANY_COMMANDS")
	if r.Details["max_total"] != 2.0 || r.Details["running_yours"] != 0.0 {
		t.Fatalf("details: %s", r.raw)
	}
	wg.Wait()
}
