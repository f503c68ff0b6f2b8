package handlers_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// scrape GETs /metrics with an optional bearer token and returns status and body.
func scrape(t *testing.T, e *env, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetricsCountCallsWithoutPersonalData: /metrics counts tool calls by tool and code,
// refusals and durations, and never carries a user id, a path or a token as a label.
func TestMetricsCountCallsWithoutPersonalData(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1"})
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, nil))
	wantError(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "../secret-name.txt"}, nil), "PATH_ESCAPE")
	wantError(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "big.txt", "content": strings.Repeat("x", 2<<20)}, nil), "QUOTA_EXCEEDED")
	status, body := scrape(t, e, "")
	if status != http.StatusOK {
		t.Fatalf("/metrics answered %d", status)
	}
	for _, want := range []string{
		`fileshed_tool_calls_total{code="OK",tool="shed_tree"} 1`,
		`fileshed_tool_calls_total{code="PATH_ESCAPE",tool="shed_read"} 1`,
		`fileshed_sandbox_refusals_total{code="PATH_ESCAPE"} 1`,
		`fileshed_quota_refusals_total{tool="shed_create_file"} 1`,
		`fileshed_tool_duration_seconds_count{tool="shed_tree"} 1`,
		`fileshed_commands_running 0`,
		`process_resident_memory_bytes`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, leak := range []string{"secret-name", "big.txt", `"local"`, "users/"} {
		if strings.Contains(body, leak) {
			t.Errorf("/metrics leaks %q", leak)
		}
	}
}

// TestMetricsTokenRequired: with metrics.token set, /metrics needs it as a bearer token.
func TestMetricsTokenRequired(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_METRICS_TOKEN": "scrape-key-0123456789"})
	if status, _ := scrape(t, e, ""); status != http.StatusUnauthorized {
		t.Fatalf("no token: %d, want 401", status)
	}
	if status, _ := scrape(t, e, "wrong"); status != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d, want 401", status)
	}
	if status, body := scrape(t, e, "scrape-key-0123456789"); status != http.StatusOK || !strings.Contains(body, "fileshed_tool_calls_total") && !strings.Contains(body, "fileshed_commands_running") {
		t.Fatalf("right token: %d", status)
	}
}

// waitMetric waits (up to 30 s) until /metrics, scraped with the bearer token key (""
// for none), shows line: the event a test waits for, such as a number of running commands.
func (e *env) waitMetric(key, line string) {
	e.t.Helper()
	t := e.t.(*testing.T)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, body := scrape(t, e, key); strings.Contains(body, line) {
			return
		}
		if time.Now().After(deadline) {
			_, body := scrape(t, e, key)
			t.Fatalf("/metrics never showed %q: %s", line, body)
		}
	}
}

// TestMetricsShowRunningCommands: a command that runs shows in fileshed_commands_running.
func TestMetricsShowRunningCommands(t *testing.T) {
	t.Parallel() // owns its server; waits more than it computes (issue 34)
	e := start(t, nil)
	done := make(chan reply, 1)
	go func() {
		done <- e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "sleep", "args": []string{"3"}}, nil)
	}()
	seen := false
	for i := 0; i < 250 && !seen; i++ {
		_, body := scrape(t, e, "")
		seen = strings.Contains(body, "fileshed_commands_running 1")
		if !seen {
			time.Sleep(10 * time.Millisecond)
		}
	}
	wantOK(t, <-done)
	if !seen {
		t.Fatal("fileshed_commands_running never showed the running command")
	}
	if _, body := scrape(t, e, ""); !strings.Contains(body, "fileshed_commands_running 0") {
		t.Fatal("the finished command still counts as running")
	}
}

// /metrics times the git commits and state database writes behind the tools, by operation.
func TestMetricsTimeGitAndDatabase(t *testing.T) {
	e := start(t, nil)
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "a.md", "content": "x\n"}, nil))
	wantOK(t, e.post("shed_exec", map[string]any{"zone": "documents", "cmd": "touch", "args": []string{"b.md"}}, nil))
	deadline := time.Now().Add(5 * time.Second) // the audit trail is written in the background
	for {
		_, body := scrape(t, e, "")
		missing := ""
		for _, op := range []string{"git_commit", "git_commit_all", "db_quota_reserve", "db_audit"} {
			if !strings.Contains(body, `fileshed_operation_duration_seconds_count{op="`+op+`"}`) {
				missing = op
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics has no duration of %s", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
