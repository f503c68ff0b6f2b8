package handlers_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/handlers"
)

// A merged tool runs the original tool its action names, with the same arguments, and the
// original routes keep working.
func TestMergedLockeditRunsEachAction(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Documents/data/plan.md", "v1\n")
	c := conv("c1")
	args := func(action string, extra map[string]any) map[string]any {
		m := map[string]any{"action": action, "zone": "documents", "path": "plan.md"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	r := e.post("shed_lockedit", args("open", nil), c)
	wantOK(t, r)
	if !strings.Contains(r.raw, "v1") {
		t.Fatalf("open did not return the content: %s", r.raw)
	}
	wantOK(t, e.post("shed_lockedit", args("overwrite", map[string]any{"content": "v2\n"}), c))
	wantOK(t, e.post("shed_lockedit", args("exec", map[string]any{"cmd": "sed", "args": []string{"-i", "s/v2/v3/", "."}}), c))
	wantOK(t, e.post("shed_lockedit", args("save", map[string]any{"message": "merged save"}), c))
	if got := readFile(t, e, "users/local/Documents/data/plan.md"); got != "v3\n" {
		t.Fatalf("saved content %q", got)
	}
	// The original route still answers on its own.
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "documents", "path": "plan.md"}, c))
	wantOK(t, e.post("shed_lockedit", args("cancel", nil), c))
}

func TestMergedToolRefusesMissingAndUnknownAction(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.post("shed_lockedit", map[string]any{"zone": "storage", "path": "a.txt"}, nil)
	wantError(t, r, "MISSING_PARAMETER")
	if !strings.Contains(r.Usage, "open") || !strings.Contains(r.Hint, "force_unlock") {
		t.Fatalf("the answer should list the actions: usage %q hint %q", r.Usage, r.Hint)
	}
	r = e.post("shed_lockedit", map[string]any{"action": "explode", "zone": "storage", "path": "a.txt"}, nil)
	wantError(t, r, "INVALID_PARAMETER")
	if !strings.Contains(r.Message, "explode") {
		t.Fatalf("message %q", r.Message)
	}
	r = e.post("shed_lockedit", `{"action": ["open"]}`, nil)
	wantError(t, r, "INVALID_PARAMETER")
}

// The spec shows the merged tool with an action enum and hides the tools it stands for.
func TestMergedToolSpec(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	e.spec(&doc)
	if doc.Paths["/shed_lockedit"] == nil {
		t.Fatal("shed_lockedit missing from the spec")
	}
	for _, hidden := range []string{"/shed_lockedit_open", "/shed_lockedit_save", "/shed_force_unlock"} {
		if doc.Paths[hidden] != nil {
			t.Errorf("%s should leave the model-facing spec", hidden)
		}
	}
}

// shed_info's actions run the zero-argument tools, whatever else the body holds; shed_help
// with howto "" (what a model sends for the spec's required argument) is the quick reference.
func TestMergedInfoAndHelpWithEmptyGuide(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	for action, key := range map[string]string{"stats": "quota", "parameters": "network_mode", "commands": "sandbox", "maintenance": "locks"} {
		r := e.post("shed_info", map[string]any{"action": action, "zone": "ignored"}, nil)
		wantOK(t, r)
		if !strings.Contains(r.raw, key) {
			t.Errorf("shed_info %s: %s has no %q", action, r.raw, key)
		}
	}
	r := e.post("shed_help", map[string]any{"howto": ""}, nil)
	wantOK(t, r)
	if !strings.Contains(r.raw, "quick reference") {
		t.Fatalf("shed_help(howto=\"\"): %s", r.raw)
	}
}

// tool_descriptions replaces a model-facing tool's description; a name the model does not
// see (unknown, or an action of a merged tool) refuses to start.
func TestToolDescriptionsOverride(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_TOOL_DESCRIPTIONS": `{"shed_exec": "Run a command in the team's sandbox."}`})
	var doc struct {
		Paths map[string]map[string]struct {
			Description string `json:"description"`
		} `json:"paths"`
	}
	e.spec(&doc)
	if got := doc.Paths["/shed_exec"]["post"].Description; got != "Run a command in the team's sandbox." {
		t.Fatalf("description %q", got)
	}
	for _, bad := range []string{`{"shed_nope": "x"}`, `{"shed_lockedit_open": "x"}`} {
		cfg := config(t, map[string]string{"FILESHED_TOOL_DESCRIPTIONS": bad})
		_, _, _, err := handlers.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err == nil || !strings.Contains(err.Error(), "tool_descriptions") {
			t.Fatalf("%s: want a start-up error naming tool_descriptions, got %v", bad, err)
		}
	}
}

// shed_stats shows each zone's share of the quota and the caller's open locked edits.
func TestStatsShowsZonesAndLocks(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1"})
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "a.md", "content": strings.Repeat("x", 1<<18)}, nil))
	wantOK(t, e.post("shed_lockedit", map[string]any{"action": "open", "zone": "documents", "path": "a.md"}, conv("c1")))
	r := e.post("shed_info", map[string]any{"action": "stats"}, conv("c2"))
	wantOK(t, r)
	docs := r.Data["documents"].(map[string]any)
	if docs["files"] != float64(1) || docs["percent_of_quota"] != "25.0%" {
		t.Fatalf("documents line %v", docs)
	}
	locks := r.Data["locks"].(map[string]any)
	items := locks["items"].([]any)
	if locks["count"] != float64(1) || len(items) != 1 {
		t.Fatalf("locks %v", locks)
	}
	l := items[0].(map[string]any)
	if l["zone"] != "documents" || l["path"] != "a.md" || l["this_conversation"] != false {
		t.Fatalf("lock line %v", l)
	}
	wantOK(t, e.post("shed_link", map[string]any{"action": "create", "zone": "documents", "path": "a.md"}, nil))
	r = e.post("shed_info", map[string]any{"action": "stats"}, nil)
	if links := r.Data["links"].(map[string]any); links["active"] != float64(1) || links["total"] != float64(1) {
		t.Fatalf("links %v", links)
	}
}
