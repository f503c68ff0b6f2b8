package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPListsTheSpecTools: tools/list is the model-facing spec, generated from it: the
// same names, descriptions (the operator's tool_descriptions included), titles and input
// schemas (references inlined); the annotations come from each tool's declared hints and
// never appear in the OpenAPI document.
func TestMCPListsTheSpecTools(t *testing.T) {
	e := start(t, with(mcpOn, map[string]string{"FILESHED_TOOL_DESCRIPTIONS": `{"shed_tree":"Folder tree, as the operator words it"}`}))
	res, err := e.mcpConnect(nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]struct {
			Post struct {
				OperationID, Summary, Description string
				RequestBody                       struct {
					Content map[string]struct{ Schema any }
				}
			}
		}
		Components struct{ Schemas map[string]any }
	}
	e.spec(&doc)
	var specNames, mcpNames []string
	for _, item := range doc.Paths {
		specNames = append(specNames, item.Post.OperationID)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		mcpNames = append(mcpNames, tl.Name)
		byName[tl.Name] = tl
	}
	sort.Strings(specNames)
	sort.Strings(mcpNames)
	if !reflect.DeepEqual(specNames, mcpNames) {
		t.Fatalf("MCP tools %v, spec operations %v", mcpNames, specNames)
	}
	for _, item := range doc.Paths {
		op := item.Post
		tl := byName[op.OperationID]
		if tl.Description != op.Description || tl.Title != op.Summary {
			t.Errorf("%s: MCP description %q title %q, spec %q %q", op.OperationID, tl.Description, tl.Title, op.Description, op.Summary)
		}
		want := resolveRefs(op.RequestBody.Content["application/json"].Schema, doc.Components.Schemas)
		if !reflect.DeepEqual(tl.InputSchema, want) {
			got, _ := json.Marshal(tl.InputSchema)
			exp, _ := json.Marshal(want)
			t.Errorf("%s: MCP input schema\n%s\nspec\n%s", op.OperationID, got, exp)
		}
	}
	if d := byName["shed_tree"].Description; d != "Folder tree, as the operator words it" {
		t.Errorf("tool_descriptions not applied over MCP: %q", d)
	}
	type effect struct{ readOnly, destructive, idempotent bool }
	for name, want := range map[string]effect{
		"shed_read":        {readOnly: true, idempotent: true},
		"shed_delete":      {destructive: true, idempotent: true},
		"shed_create_file": {destructive: true, idempotent: true},
		"shed_patch_text":  {destructive: true},
		"shed_lockedit":    {destructive: true}, // open, overwrite, exec, save, cancel, force_unlock
		"shed_info":        {idempotent: true},  // maintenance removes only what expired; the rest reads (issue 33 item 8)
		"shed_version":     {},                  // history and changes read; restore and undo make a new change, the old content stays (undo twice: a redo)
		"shed_group":       {idempotent: true},  // list, info read; set_mode, chown change, destroy nothing
	} {
		a := byName[name].Annotations
		if a == nil || a.DestructiveHint == nil {
			t.Fatalf("%s: annotations %+v", name, a)
		}
		if got := (effect{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint}); got != want {
			t.Errorf("%s: annotations %+v, want %+v", name, got, want)
		}
	}
	resp, err := http.Get(e.srv.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&raw)
	if strings.Contains(string(raw), "Hint") || strings.Contains(string(raw), "idempotent") {
		t.Fatal("MCP annotations leaked into the OpenAPI document (tokens in every chat)")
	}
}

// resolveRefs inlines component references, as a client that reads the spec does.
func resolveRefs(v any, schemas map[string]any) any {
	switch s := v.(type) {
	case nil:
		return map[string]any{"type": "object", "properties": map[string]any{}}
	case map[string]any:
		if ref, ok := s["$ref"].(string); ok {
			return resolveRefs(schemas[strings.TrimPrefix(ref, "#/components/schemas/")], schemas)
		}
		out := map[string]any{}
		for k, x := range s {
			out[k] = resolveRefs(x, schemas)
		}
		return out
	case []any:
		out := make([]any, len(s))
		for i, x := range s {
			out[i] = resolveRefs(x, schemas)
		}
		return out
	}
	return v
}

// TestMCPCallsTheTools: create, read, a domain error, a merged tool and lenient decoding,
// through the official Go SDK client over HTTP; answers are the HTTP envelopes.
func TestMCPCallsTheTools(t *testing.T) {
	e := start(t, mcpOn)
	cs := e.mcpConnect(nil)
	r, isErr := e.mcpCall(cs, "shed_create_file", map[string]any{"zone": "storage", "path": "notes/a.txt", "content": "hello over mcp"})
	if isErr || !r.Success {
		t.Fatalf("create: %s", r.raw)
	}
	r, isErr = e.mcpCall(cs, "shed_read", map[string]any{"zone": "storage", "path": "notes/a.txt"})
	if isErr || r.Data["content"] == nil || !strings.Contains(r.Data["content"].(string), "hello over mcp") {
		t.Fatalf("read: %s", r.raw)
	}
	if got := readFile(t, e, "users/local/Storage/data/notes/a.txt"); got != "hello over mcp" {
		t.Fatalf("on disk: %q", got)
	}
	// A domain error is a tool result the model reads (isError, the code in the text), not
	// a protocol error.
	r, isErr = e.mcpCall(cs, "shed_read", map[string]any{"zone": "storage", "path": "notes/missing.txt"})
	if !isErr || r.Error != "FILE_NOT_FOUND" || !strings.Contains(r.raw, `"error":"FILE_NOT_FOUND"`) {
		t.Fatalf("missing file: isError %v %s", isErr, r.raw)
	}
	r, isErr = e.mcpCall(cs, "shed_info", map[string]any{"action": "stats"})
	if isErr {
		t.Fatalf("merged tool: %s", r.raw)
	}
	r, isErr = e.mcpCall(cs, "shed_info", map[string]any{"action": "nope"})
	if !isErr || r.Error != "INVALID_PARAMETER" || r.Usage == "" {
		t.Fatalf("unknown action: %s", r.raw)
	}
	// Lenient decoding, as on HTTP: a number in a string, null for an optional argument.
	r, isErr = e.mcpCall(cs, "shed_tree", map[string]any{"zone": "storage", "depth": "2", "group": nil})
	if isErr || !strings.Contains(r.raw, "a.txt") {
		t.Fatalf("lenient decoding: %s", r.raw)
	}
	r, isErr = e.mcpCall(cs, "shed_tree", map[string]any{"zone": "storage", "depth": "deep"})
	if !isErr || r.Error != "INVALID_PARAMETER" {
		t.Fatalf("bad depth: %s", r.raw)
	}
	// The original, unmerged names stay HTTP routes; MCP lists only the model-facing tools.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shed_stats", Arguments: map[string]any{}}); err == nil {
		t.Fatal("shed_stats is not an MCP tool: want a protocol error")
	}
}

// TestMCPDisabledIsAnUnknownRoute: off by default, /mcp does not exist, for a caller with
// or without credentials (404, not 401: nothing tells that it could be turned on).
func TestMCPDisabledIsAnUnknownRoute(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key})
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "u1"}} {
		status, header, body := e.mcpPost(listCall(), h)
		if status != http.StatusNotFound || !strings.Contains(body, `"NOT_FOUND"`) || !strings.HasPrefix(header.Get("Content-Type"), "application/json") {
			t.Fatalf("mcp off, headers %v: %d %s", h, status, body)
		}
	}
}

// TestMCPOnlyPost: stateless Streamable HTTP has no stream to GET and no session to DELETE.
func TestMCPOnlyPost(t *testing.T) {
	t.Parallel()
	e := start(t, mcpOn)
	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		req, _ := http.NewRequest(m, e.srv.URL+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		r := e.do(req)
		if r.Status != http.StatusMethodNotAllowed || r.Error != "METHOD_NOT_ALLOWED" {
			t.Fatalf("%s /mcp: %d %s", m, r.Status, r.raw)
		}
	}
}
