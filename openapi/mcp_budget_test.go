package openapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
)

// mcpToolList lists the tools of a real server with mcp.enabled through the official Go SDK
// client, over HTTP.
func mcpToolList(t *testing.T) []*mcp.Tool {
	t.Helper()
	defaults, err := os.ReadFile("../valves.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FILESHED_STORAGE_BASE_PATH": t.TempDir(), "FILESHED_MCP_ENABLED": "true"}
	cfg, _, err := valves.Load(defaults, nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	h, _, svc, err := handlers.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); svc.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "budget", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// TestMCPToolListBudget: the MCP tool list costs the model what the OpenAPI spec costs
// (the same tools), within the same budget. Counted as a client hands the tools to the model
// (name, description, input schema, in the OpenAI tools format, as Open WebUI does), then
// with Open WebUI's prefix ("<connection id>_" before every name), and
// the whole tools/list answer (titles and annotations, which clients show but rarely send)
// is reported.
func TestMCPToolListBudget(t *testing.T) {
	tools := mcpToolList(t)
	if len(tools) != len(toolPayload(t, spec(t))) {
		t.Fatalf("%d MCP tools, %d in the spec", len(tools), len(toolPayload(t, spec(t))))
	}
	count := tokenCounter(t)
	payload := func(prefix string) []tool {
		out := make([]tool, 0, len(tools))
		for _, tl := range tools {
			params, _ := tl.InputSchema.(map[string]any)
			out = append(out, tool{Type: "function", Function: toolFunction{Name: prefix + tl.Name, Description: tl.Description, Parameters: params}})
		}
		return out
	}
	total, chars := count(payload(""))
	short, _ := count(payload("fs_"))
	long, _ := count(payload("fileshed_"))
	whole, wholeChars := count(tools)
	t.Logf("MCP: %d tools, %d tokens, %d characters as sent to the model; with Open WebUI's prefix, %d tokens for the id fs, %d for fileshed; "+
		"the whole tools/list: %d tokens, %d characters (budget %d tokens, %d characters)",
		len(tools), total, chars, short, long, whole, wholeChars, TokenBudget, CharBudget)
	if total > TokenBudget {
		t.Errorf("the MCP tool list costs %d tokens, over the budget of %d", total, TokenBudget)
	}
	if chars > CharBudget {
		t.Errorf("the MCP tool list is %d characters, over the budget of %d", chars, CharBudget)
	}
}
