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
// The identity middleware has authenticated the request before any JSON-RPC is read; every
// tool call is dispatched in-process to its own route (mcp_call.go), so decoding, limits,
// audit, metrics and logs are those of the HTTP call.
func mountMCP(r chi.Router, api huma.API, d Deps) {
	cfg := d.cfg
	doc := api.OpenAPI()
	server := mcp.NewServer(&mcp.Implementation{Name: openapi.Title, Version: Version}, &mcp.ServerOptions{
		Instructions: doc.Info.Description,
		// Tools only: no logging capability, no list-changed notifications (the list is fixed).
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	call := mcpCaller{route: r, log: d.Log}
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
		// The SDK's DNS-rebinding guard: a request that reached a loopback address with a
		// Host that is not a loopback name comes from a page whose name was rebound to
		// 127.0.0.1. A reverse proxy on the same host that keeps the public Host needs it off.
		DisableLocalhostProtection:   !cfg.MCP.DNSRebindingGuard,
		MaxRequestBodyBytes:          limit,
		PropagateRequestCancellation: true,
	})
	origins := originGuard(cfg.CORS.AllowedOrigins)
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
		origins.Handler(sdk).ServeHTTP(w, req)
	}))
}

// originGuard refuses a browser's cross-origin POST unless its Origin is one that
// cors.allowed_origins names (MCP servers must validate Origin: a page on another site could
// otherwise drive a signed-in user's tools). "*" trusts no one here: it opens the
// HTTP routes to every page, never /mcp. Clients that are not browsers send no Origin.
func originGuard(allowed []string) *http.CrossOriginProtection {
	p := http.NewCrossOriginProtection()
	for _, o := range allowed {
		if o == "*" {
			continue
		}
		if err := p.AddTrustedOrigin(o); err != nil {
			panic("mcp: cors.allowed_origins " + o + ": " + err.Error()) // valves.Validate refused it already
		}
	}
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writeEnvelope(w, http.StatusForbidden, Envelope{Error: "ORIGIN_FORBIDDEN",
			Message: "Cross-origin request refused: " + req.Header.Get("Origin"), Details: map[string]any{},
			Hint: "Add the page's origin to cors.allowed_origins (FILESHED_CORS_ALLOWED_ORIGINS), or connect from a desktop client"})
	}))
	return p
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
