package handlers

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/valves"
)

// preflightHeaders are the request headers a trusted page may send: identity, chat id, the
// MCP headers of a browser-based MCP client.
const preflightHeaders = "Authorization, Content-Type, X-OpenWebUI-Chat-Id, X-OpenWebUI-User-Id, X-OpenWebUI-User-Name, " +
	"X-OpenWebUI-User-Email, X-OpenWebUI-User-Role, X-OpenWebUI-User-Jwt, X-Shed-Groups, " +
	"Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name"

// siteGuard is the one guard between web pages and fileshed, on every route (the tools,
// /mcp, the links, the spec, health and metrics), before authentication:
//
//   - Host: a request that reached a loopback address must name the server as it is known
//     (hostAllowed). Why: a page whose name was rebound to 127.0.0.1 (DNS rebinding) is
//     same-origin with the server in the browser's eyes, so only the Host it sends betrays it.
//   - CORS: a page of a trusted origin (cors.allowed_origins, by default openwebui.url's)
//     gets its preflight answered and may read the answers; no other page may.
//   - Cross-site requests: a state-changing request (not GET, HEAD or OPTIONS) that a
//     browser marks as coming from another origin (Sec-Fetch-Site, else Origin against Host)
//     is refused unless its origin is trusted. Why: a "simple request" (a form, or fetch with
//     text/plain) needs no preflight, so CORS alone would let any page run the tools of a
//     user's browser that needs no credential (auth.mode none) and read them with "*".
//
// Clients that are not browsers send no Origin and no Sec-Fetch-Site and pass. A refusal
// answers 403 CROSS_ORIGIN_FORBIDDEN, logged (warn) and counted by reason (host, origin).
func siteGuard(cfg *valves.Config, m *metrics, log *slog.Logger) func(http.Handler) http.Handler {
	trusted := cfg.TrustedOrigins()
	anyOrigin := cfg.AnyOrigin()
	allowed := map[string]bool{}
	for _, o := range trusted {
		allowed[o] = true
	}
	protect := http.NewCrossOriginProtection()
	for _, o := range trusted {
		if o == "*" {
			continue
		}
		if err := protect.AddTrustedOrigin(o); err != nil {
			panic("cors.allowed_origins " + o + ": " + err.Error()) // valves.Validate refused it already
		}
	}
	names := servedNames(cfg)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !hostAllowed(r, names) {
				refuseCrossSite(w, r, m, log, "host", core.Errf(core.CrossOriginForbidden,
					"Host %q is not a name of this server: refused (a web page whose name points at this machine)", clip(r.Host)).
					With("host", clip(r.Host)).
					WithHint("Open fileshed as localhost or by its IP address, or set public_url (FILESHED_PUBLIC_URL) to the address you reach it at"))
				return
			}
			origin := r.Header.Get("Origin")
			if origin != "" && (anyOrigin || allowed[origin]) {
				h := w.Header()
				if anyOrigin {
					h.Set("Access-Control-Allow-Origin", "*")
				} else {
					h.Set("Access-Control-Allow-Origin", origin)
					h.Add("Vary", "Origin")
				}
				h.Set("Access-Control-Expose-Headers", "X-Request-Id")
				if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
					h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
					h.Set("Access-Control-Allow-Headers", preflightHeaders)
					h.Set("Access-Control-Max-Age", "600")
					w.WriteHeader(http.StatusNoContent)
					return
				}
			}
			if !anyOrigin {
				if err := protect.Check(r); err != nil {
					from := origin
					if from == "" {
						from = "Sec-Fetch-Site: " + r.Header.Get("Sec-Fetch-Site")
					}
					refuseCrossSite(w, r, m, log, "origin", core.Errf(core.CrossOriginForbidden,
						"Cross-origin request refused: a page of %s may not call fileshed", clip(from)).With("origin", clip(origin)))
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// refuseCrossSite answers a refused request: logged at warn (route, origin, host, client;
// no credential is read, so none is logged), counted, then the envelope.
func refuseCrossSite(w http.ResponseWriter, r *http.Request, m *metrics, log *slog.Logger, reason string, e *core.Error) {
	m.crossOrigin.WithLabelValues(reason).Inc()
	log.Warn("cross-origin request refused", "request_id", requestID(r.Context()), "reason", reason, "method", r.Method,
		"route", clip(r.URL.Path), "origin", clip(r.Header.Get("Origin")), "sec_fetch_site", clip(r.Header.Get("Sec-Fetch-Site")),
		"host", clip(r.Host), "client", r.RemoteAddr)
	writeError(w, log, requestID(r.Context()), e)
}

// servedNames are the host names (lower case) a request to a loopback address may name
// beside loopback names and IP addresses: listen's host and public_url's host.
func servedNames(cfg *valves.Config) map[string]bool {
	names := map[string]bool{}
	if host, _, err := net.SplitHostPort(cfg.Listen); err == nil && host != "" {
		names[strings.ToLower(host)] = true
	}
	if u, err := url.Parse(cfg.PublicURL()); err == nil && u.Hostname() != "" {
		names[strings.ToLower(u.Hostname())] = true
	}
	return names
}

// hostAllowed is the DNS-rebinding rule. It applies to a request that reached a loopback
// address (always, with a loopback listen): a rebound page can reach nothing else from the
// user's browser that this server could tell apart, while a real deployment reached on a
// network address (Open WebUI's backend calling http://fileshed:8000) has names no list
// could hold. There, Host must be an IP address (a page's Host is its own name, never an
// address), localhost or a name under .localhost (browsers resolve those to loopback
// themselves), or a name in names. An empty Host (HTTP/1.0) names nothing
// foreign.
func hostAllowed(r *http.Request, names map[string]bool) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	if !ok || !local.IP.IsLoopback() || r.Host == "" {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	return net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") || names[host]
}

// clip cuts a client-chosen value for a log line or an answer.
func clip(s string) string {
	if len(s) > 128 {
		return s[:128] + "..."
	}
	return s
}
