package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpOn is the valve that serves POST /mcp, to merge into a test's valves.
var mcpOn = map[string]string{"FILESHED_MCP_ENABLED": "true"}

// with returns the valves of a and b together (b wins).
func with(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// headerTransport sends fixed headers with every request, as an MCP client's "headers"
// setting does (VS Code's mcp.json, Open WebUI's connection auth).
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect connects the official Go SDK client to the server's POST /mcp over real HTTP,
// with headers on every request.
func (e *env) mcpConnect(headers map[string]string) *mcp.ClientSession {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "fileshed-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: headerTransport(headers)}}, nil)
	if err != nil {
		e.t.Fatalf("MCP connect: %v", err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

// mcpCall calls a tool over MCP and returns its envelope (from the text content) and
// isError. The text, structuredContent and isError must agree, and the envelope meets the
// same contract as over HTTP (seen by the error-catalogue test).
func (e *env) mcpCall(cs *mcp.ClientSession, name string, args any) (reply, bool) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		e.t.Fatalf("MCP %s: %v", name, err)
	}
	if len(res.Content) != 1 {
		e.t.Fatalf("MCP %s: %d contents, want one text", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		e.t.Fatalf("MCP %s: content %T, want text", name, res.Content[0])
	}
	r := reply{Status: http.StatusOK, raw: text.Text}
	if err := json.Unmarshal([]byte(text.Text), &r); err != nil {
		e.t.Fatalf("MCP %s: text is not an envelope: %s", name, text.Text)
	}
	structured, _ := json.Marshal(res.StructuredContent)
	var a, b any
	_ = json.Unmarshal(structured, &a)
	_ = json.Unmarshal([]byte(text.Text), &b)
	if !reflect.DeepEqual(a, b) {
		e.t.Fatalf("MCP %s: structuredContent %s differs from the text %s", name, structured, text.Text)
	}
	if res.IsError == r.Success {
		e.t.Fatalf("MCP %s: isError %v with success %v", name, res.IsError, r.Success)
	}
	e.check("mcp "+name, r)
	return r, res.IsError
}

// mcpPost sends one raw JSON-RPC body to POST /mcp with headers, as a client that is not the
// SDK would, and returns the status, the answer's headers and its body.
func (e *env) mcpPost(body io.Reader, headers map[string]string) (int, http.Header, string) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp", body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// wantEnvelope asserts a refusal of POST /mcp before any JSON-RPC: the status and the
// envelope's code.
func (e *env) wantEnvelope(status int, header http.Header, body string, wantStatus int, code string) {
	e.t.Helper()
	var r reply
	if err := json.Unmarshal([]byte(body), &r); err != nil || status != wantStatus || r.Error != code ||
		!strings.HasPrefix(header.Get("Content-Type"), "application/json") {
		e.t.Fatalf("want %d %s, got %d (%s): %s", wantStatus, code, status, header.Get("Content-Type"), body)
	}
	r.raw = body
	e.check("POST /mcp", r)
}

// listCall is a JSON-RPC tools/list request, valid on its own in a stateless exchange.
func listCall() io.Reader {
	return strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
}
