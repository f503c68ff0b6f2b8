package handlers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestMCPCallsAreAuditedCountedAndLoggedLikeHTTP: a call over MCP leaves the same audit row,
// the same metrics and the same log line as the HTTP call, under the request id that
// POST /mcp answered in X-Request-Id.
func TestMCPCallsAreAuditedCountedAndLoggedLikeHTTP(t *testing.T) {
	e := start(t, mcpOn)
	chat := map[string]string{"X-OpenWebUI-Chat-Id": "chat-mcp"}
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, nil))
	cs := e.mcpConnect(chat)
	e.mcpCall(cs, "shed_tree", map[string]any{"zone": "storage"})
	e.mcpCall(cs, "shed_info", map[string]any{"action": "stats"})
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"shed_read","arguments":{"zone":"storage","path":"../etc/passwd"}}}`
	status, header, body := e.mcpPost(strings.NewReader(call), chat)
	if status != http.StatusOK || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "PATH_ESCAPE") {
		t.Fatalf("raw tools/call: %d %s", status, body)
	}
	reqID := header.Get("X-Request-Id")

	_, metrics := scrape(t, e, "")
	for _, want := range []string{
		`fileshed_tool_calls_total{code="OK",tool="shed_tree"} 2`, // one HTTP, one MCP
		`fileshed_tool_calls_total{code="OK",tool="shed_stats"} 1`,
		`fileshed_tool_calls_total{code="PATH_ESCAPE",tool="shed_read"} 1`,
		`fileshed_sandbox_refusals_total{code="PATH_ESCAPE"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	want := []auditRow{
		{"local", "unknown", "shed_tree", "storage", ".", "OK"},
		{"local", "chat-mcp", "shed_tree", "storage", ".", "OK"},
		{"local", "chat-mcp", "shed_stats", "", "", "OK"},
		{"local", "chat-mcp", "shed_read", "storage", "../etc/passwd", "PATH_ESCAPE"},
	}
	rows := auditRows(t, e, len(want))
	if len(rows) != len(want) {
		t.Fatalf("audit rows %+v, want %+v", rows, want)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("audit row %d: %+v, want %+v", i, rows[i], want[i])
		}
	}

	var logged bool
	for _, line := range strings.Split(e.logs.String(), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) != nil || l["msg"] != "tool" || l["tool"] != "shed_read" {
			continue
		}
		logged = l["request_id"] == reqID && l["outcome"] == "PATH_ESCAPE" && l["conv"] == "chat-mcp"
	}
	if reqID == "" || !logged {
		t.Fatalf("no tool log line under the request id %q of POST /mcp:\n%s", reqID, e.logs.String())
	}
}
