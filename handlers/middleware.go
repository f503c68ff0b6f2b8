package handlers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/fileshed/fileshed/core"
)

type reqIDKey struct{}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(reqIDKey{}).(string)
	return id
}

// withRequestID gives every request an id (logged, returned in X-Request-Id and in
// INTERNAL_ERROR details).
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		id := hex.EncodeToString(b)
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), reqIDKey{}, id)))
	})
}

// recoverer turns a panic into INTERNAL_ERROR with the request id: one log line, no stack
// trace to the client.
func recoverer(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					log.Error("panic", "request_id", requestID(r.Context()), "path", r.URL.Path, "panic", v)
					writeError(w, log, requestID(r.Context()), core.Errf(core.InternalError, "panic"))
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// normalizePath cleans "//shed_tree" or "/shed_tree/" to "/shed_tree" in place: Open WebUI
// does not follow redirects, so the router must never answer one.
func normalizePath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Download links keep their path as sent: the link route refuses "..", NUL and
		// friends itself with a 404 page, where cleaning would turn them into other routes.
		if p := r.URL.Path; strings.HasPrefix(p, "/dl/") {
			r.URL.RawPath = ""
		} else if p != "/" {
			c := path.Clean("/" + p)
			r.URL.Path, r.URL.RawPath = c, ""
		}
		next.ServeHTTP(w, r)
	})
}

// cors answers preflights before authentication (browser-called tool servers send no
// credentials on OPTIONS) and sets the headers on every answer.
func cors(origins []string) func(http.Handler) http.Handler {
	all := slices.Contains(origins, "*")
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			origin := r.Header.Get("Origin")
			if origin != "" && (all || slices.Contains(origins, origin)) {
				h := w.Header()
				if all {
					h.Set("Access-Control-Allow-Origin", "*")
				} else {
					h.Set("Access-Control-Allow-Origin", origin)
					h.Add("Vary", "Origin")
				}
				h.Set("Access-Control-Expose-Headers", "X-Request-Id")
				if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
					h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
					h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-OpenWebUI-Chat-Id, X-OpenWebUI-User-Id, X-OpenWebUI-User-Name, X-OpenWebUI-User-Email, X-OpenWebUI-User-Role, X-OpenWebUI-User-Jwt, X-Shed-Groups")
					h.Set("Access-Control-Max-Age", "600")
					w.WriteHeader(http.StatusNoContent)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// authenticate guards the tool routes (/shed_*); the spec, health and download routes stay
// public. Failures answer 401 (or 503 when Open WebUI is unreachable) with the envelope.
func authenticate(a Authenticator, log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/shed_") {
				next.ServeHTTP(w, r)
				return
			}
			c, err := a.Authenticate(r)
			if err != nil {
				writeError(w, log, requestID(r.Context()), err)
				return
			}
			next.ServeHTTP(w, r.WithContext(withCaller(r.Context(), c)))
		})
	}
}
