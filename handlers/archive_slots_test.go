package handlers_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// holdSlot runs a 3-second command as user (headers of the links tests) in the background
// and waits until it runs; wait returns once it has ended.
func holdSlot(t *testing.T, e *env, user string) (wait func()) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Go(func() {
		wantOK(t, e.post("shed_exec", execCall{"zone": "storage", "cmd": "sleep", "args": []string{"3"}}, as(user)))
	})
	e.waitMetric(linksKey, "fileshed_commands_running 1") // the command has its slot and runs
	return wg.Wait
}

// TestZipTakesACommandSlot (issue 24 item 6): a zip of a tree is work like a command; it
// had no bound on parallel calls. shed_zip now takes one of the caller's command slots:
// with exec_max_per_user 1 and a command of alice's running, her zip is TOO_MANY_COMMANDS
// after the slot wait, while bob's zip runs.
func TestZipTakesACommandSlot(t *testing.T) {
	t.Parallel() // owns its server; waits more than it computes (issue 34)
	e := startLinks(t, map[string]string{"FILESHED_EXEC_MAX_PER_USER": "1"})
	for _, u := range []string{"alice", "bob"} {
		e.write("users/"+u+"/Storage/data/proj/a.txt", "a")
	}
	wait := holdSlot(t, e, "alice")
	r := e.post("shed_zip", map[string]any{"zone": "storage", "src": "proj"}, as("alice"))
	wantError(t, r, "TOO_MANY_COMMANDS")
	if r.Details["running_yours"] != 1.0 || r.Details["max_per_user"] != 1.0 {
		t.Fatalf("details: %s", r.raw)
	}
	wantOK(t, e.post("shed_zip", map[string]any{"zone": "storage", "src": "proj"}, as("bob")))
	wait()
	wantOK(t, e.post("shed_zip", map[string]any{"zone": "storage", "src": "proj"}, as("alice")))
}

// TestLinkZipTakesTheCreatorsSlot (issue 24 item 6): anyone holding a folder link could
// start zips of it in parallel. ?zip now takes a command slot of the link's creator (and
// one of the server's): while alice's share or the server's total is taken, her link's zip
// answers 503 with Retry-After and a short page, and the download is not counted; once a
// slot is free it streams.
func TestLinkZipTakesTheCreatorsSlot(t *testing.T) {
	t.Parallel() // owns its server; waits more than it computes (issue 34)
	for _, c := range []struct{ name, valve, holder string }{
		{"per user", "FILESHED_EXEC_MAX_PER_USER", "alice"},
		{"in total", "FILESHED_EXEC_MAX_TOTAL", "bob"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each case owns its server
			e := startLinks(t, map[string]string{c.valve: "1"})
			e.write("users/alice/Storage/data/pub/a.txt", "file a")
			url := e.link("alice", map[string]any{"zone": "storage", "path": "pub", "max_downloads": 1})["url"].(string) + "?zip"
			wait := holdSlot(t, e, c.holder)
			g := e.get("GET", url, nil)
			if g.status != http.StatusServiceUnavailable || g.header.Get("Retry-After") == "" ||
				!strings.HasPrefix(g.header.Get("Content-Type"), "text/html") || !strings.Contains(g.body, "busy") ||
				g.header.Get("Content-Disposition") != "" {
				t.Fatalf("zip while the slot is taken: %d %v %.200s", g.status, g.header, g.body)
			}
			wait()
			if g := e.get("GET", url, nil); g.status != http.StatusOK || g.header.Get("Content-Type") != "application/zip" {
				t.Fatalf("zip once the slot is free (the refused one was not counted): %d %v", g.status, g.header)
			}
		})
	}
}
