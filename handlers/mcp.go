package handlers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fileshed/fileshed/openapi"
)

// mcpPath is the Model Context Protocol endpoint (mcp.enabled).
const mcpPath = "/mcp"

// mcpEnvelopeRoom is what POST /mcp may carry beyond the largest tool body: the JSON-RPC
// envelope around the arguments (the arguments themselves meet their tool's limit when the
// call is dispatched).
const mcpEnvelopeRoom = 64 << 10

// mcpPostKey carries the context of the POST /mcp that a tool call arrived in.
type mcpPostKey struct{}

// mountMCP serves POST /mcp: the model-facing tools of the finished OpenAPI document over
// MCP Streamable HTTP, stateless (each POST is a whole exchange, no session, no SSE stream).
// siteGuard has refused other web pages and the identity middleware has authenticated the
// request before any JSON-RPC is read; every
// tool call runs the tool's registered handle, as its route does (mcp_call.go), so decoding,
// limits, audit, metrics and logs are those of the HTTP call.
func mountMCP(r chi.Router, api huma.API, d Deps) {
	doc := api.OpenAPI()
	server := mcp.NewServer(&mcp.Implementation{Name: openapi.Title, Version: Version}, &mcp.ServerOptions{
		Instructions: doc.Info.Description,
		// Tools only: no logging capability, no list-changed notifications (the list is fixed).
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	call := mcpCaller{handles: d.registry.handles, limits: d.limits, log: d.Log}
	for _, t := range mcpTools(doc, d.registry.hints) {
		server.AddTool(t, call.call) // the raw AddTool: decoding stays ours (lenient), not the SDK's
	}
	limit := int64(0)
	for _, l := range d.limits {
		limit = max(limit, l)
	}
	limit += mcpEnvelopeRoom
	d.limits[mcpPath] = limit // limitBodies refuses a longer body before the SDK reads it
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true, // one JSON answer per POST: nothing is streamed
		// The SDK's own DNS-rebinding check would be a second rule beside siteGuard's, which
		// every route passes first (and which also knows public_url's host).
		DisableLocalhostProtection:   true,
		MaxRequestBodyBytes:          limit,
		PropagateRequestCancellation: true,
	})
	r.Handle(mcpPath, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			// Stateless: no GET stream to resume, no session to DELETE.
			w.Header().Set("Allow", http.MethodPost)
			writeEnvelope(w, http.StatusMethodNotAllowed, Envelope{Error: "METHOD_NOT_ALLOWED",
				Message: req.Method + " is not allowed on " + mcpPath, Details: map[string]any{},
				Hint: "MCP over Streamable HTTP, stateless: POST one JSON-RPC message per request"})
			return
		}
		// Read the whole body here, so that a chunked body over the limit is answered with
		// BODY_TOO_LARGE (limitBodies) rather than the SDK's plain-text 400.
		body, err := io.ReadAll(req.Body)
		if err != nil {
			bodyError(w, err)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req = req.WithContext(context.WithValue(req.Context(), mcpPostKey{}, req.Context()))
		sdk.ServeHTTP(w, req)
	}))
}

// bodyError writes the envelope of a request body that could not be read, as huma does for
// the tool routes: over its limit (BODY_TOO_LARGE), stalled or cut.
func bodyError(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		status = http.StatusRequestTimeout
	}
	se := huma.NewError(status, "Could not read the request body", err).(*statusError)
	writeEnvelope(w, se.status, se.Envelope)
}
