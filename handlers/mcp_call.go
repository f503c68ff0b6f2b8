package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fileshed/fileshed/core"
)

// mcpCaller runs MCP tool calls through the same registered handles as the HTTP routes.
type mcpCaller struct {
	handles map[string]handleFunc
	limits  map[string]int64 // each tool route's body limit (limitBodies')
	log     *slog.Logger
}

// call runs one tools/call on its tool's registered handle, in the context of POST /mcp
// (the caller the identity middleware authenticated, the request id): decoded leniently,
// held to its tool's body limit, audited, counted and logged exactly as the HTTP call. The
// answer is the envelope: as text (what most clients show the model), as
// structuredContent, and isError when it is not a success.
func (m mcpCaller) call(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
	defer func() {
		// The SDK runs handlers on its own goroutines, where a panic would end the process.
		if v := recover(); v != nil {
			m.log.Error("panic", "request_id", requestID(ctx), "tool", req.Params.Name, "panic", v)
			res = m.answer(ctx, core.Errf(core.InternalError, "panic"))
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
	handle, ok := m.handles[req.Params.Name]
	if !ok {
		return nil, errors.New("no such tool: " + req.Params.Name) // the SDK listed no such tool
	}
	args := req.Params.Arguments
	if limit := m.limits["/"+req.Params.Name]; int64(len(args)) > limit {
		return m.answer(ctx, (&bodyTooLargeError{limit}).coreError()), nil
	}
	out, err := handle(ctx, bytes.NewReader(args), int64(len(args)))
	if err != nil {
		return m.answer(ctx, err), nil
	}
	b, _ := marshal(out.Body)
	return result(b), nil
}

// answer is the MCP result of an error, as its route answers it: huma's own errors (a body
// that could not be read) carry their envelope, the others are the catalogue's.
func (m mcpCaller) answer(ctx context.Context, err error) *mcp.CallToolResult {
	var se *statusError
	env := Envelope{}
	if errors.As(err, &se) {
		env = se.Envelope
	} else {
		_, env = failure(m.log, requestID(ctx), err)
	}
	b, _ := marshal(env)
	return result(b)
}

// result is the MCP result of an envelope.
func result(envelope []byte) *mcp.CallToolResult {
	var head struct {
		Success bool `json:"success"`
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(envelope)}}}
	if err := json.Unmarshal(envelope, &head); err != nil {
		res.IsError = true // not an envelope: every handle answers one, so this is a bug to see
		return res
	}
	res.StructuredContent = json.RawMessage(envelope)
	res.IsError = !head.Success
	return res
}
