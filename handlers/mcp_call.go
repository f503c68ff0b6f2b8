package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fileshed/fileshed/core"
)

// mcpCaller runs MCP tool calls through the HTTP routes of the same server.
type mcpCaller struct {
	route http.Handler // the whole router: middleware, then the tool's huma route
	log   *slog.Logger
}

// call dispatches one tools/call to POST /<tool> in-process: the arguments become the
// request body, and the request carries the context of POST /mcp (the caller the identity
// middleware authenticated, the request id). So the call is decoded leniently, held to its
// tool's body limit, audited, counted and logged exactly as the HTTP call would be. The
// answer is the envelope: as text (what most clients show the model), as structuredContent,
// and isError when it is not a success.
func (m mcpCaller) call(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
	defer func() {
		// The SDK runs handlers on its own goroutines, where a panic would end the process;
		// the route's recoverer already answers INTERNAL_ERROR for the tool's own panics.
		if v := recover(); v != nil {
			m.log.Error("panic", "request_id", requestID(ctx), "tool", req.Params.Name, "panic", v)
			_, env := failure(m.log, requestID(ctx), core.Errf(core.InternalError, "panic"))
			b, _ := marshal(env)
			res = result(b)
		}
	}()
	if post, ok := ctx.Value(mcpPostKey{}).(context.Context); ok {
		// Before the 2026-07-28 protocol the SDK runs a call on a context that outlives its
		// POST. Stateless, the answer can no longer be delivered once the POST is gone: the
		// call is cancelled with it, as an HTTP call is (a command is killed, its slot freed).
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(post, cancel)()
	}
	sub, err := http.NewRequestWithContext(ctx, http.MethodPost, "/"+req.Params.Name, bytes.NewReader(req.Params.Arguments))
	if err != nil {
		return nil, err // a tool name that is no path: the SDK listed no such tool
	}
	sub.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	m.route.ServeHTTP(rec, sub)
	return result(bytes.TrimSpace(rec.Body.Bytes())), nil
}

// result is the MCP result of an envelope.
func result(envelope []byte) *mcp.CallToolResult {
	var head struct {
		Success bool `json:"success"`
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(envelope)}}}
	if err := json.Unmarshal(envelope, &head); err != nil {
		res.IsError = true // not an envelope: every route answers one, so this is a bug to see
		return res
	}
	res.StructuredContent = json.RawMessage(envelope)
	res.IsError = !head.Success
	return res
}
