package handlers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path"
	"strings"
	"time"

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

// authenticate guards the tool routes (/shed_*) and, when enabled, /mcp (guarded says which
// paths); the spec, health and download routes stay public. Failures answer 401/403 (or 503
// when Open WebUI is unreachable) with the envelope; 401 and 403 are logged and counted
// (metrics.refused).
func authenticate(a Authenticator, m *metrics, log *slog.Logger, guarded func(path string) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !guarded(r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
			c, err := a.Authenticate(r)
			if err != nil {
				status, env := failure(log, requestID(r.Context()), err)
				if status == http.StatusUnauthorized || status == http.StatusForbidden {
					m.refused(log, r, status, env.Error, env.Message)
				}
				writeEnvelope(w, status, env)
				return
			}
			next.ServeHTTP(w, r.WithContext(withCaller(r.Context(), c)))
		})
	}
}

// A refused request's body is still read and discarded, up to drainMax bytes and for at
// most drainTimeout: a client that writes its whole body before reading the answer (as
// Open WebUI's aiohttp does) otherwise gets a TCP reset instead of BODY_TOO_LARGE.
const (
	drainMax     = 64 << 20
	drainTimeout = 10 * time.Second
)

// bodyTooLargeError is returned by limitedBody's Read once the body passed its limit; the
// huma error hook (envelope.go) turns it into BODY_TOO_LARGE.
type bodyTooLargeError struct{ limit int64 }

func (e *bodyTooLargeError) Error() string {
	return fmt.Sprintf("request body over the limit of %d bytes", e.limit)
}

// coreError is the envelope's error: BODY_TOO_LARGE with the limit.
func (e *bodyTooLargeError) coreError() *core.Error {
	return core.Errf(core.BodyTooLarge, "Request body over the limit of %d bytes", e.limit).With("limit_bytes", e.limit)
}

// bodyReadBase plus one second per MiB of the route's limit is how long a request body may
// take to arrive: a client sending one byte a second cannot hold a request forever.
var bodyReadBase = 30 * time.Second

// limitedBody reads a request body up to limit bytes, then fails with bodyTooLargeError.
// Closing it leaves the real body open for limitBodies to drain. done runs once, when the
// body ends (or fails): it lifts the read deadline, which must not outlive the body (the
// server's background read would cancel a long command's context when it expires).
type limitedBody struct {
	src      io.Reader
	n, limit int64
	done     func()
	onStall  func() // runs when the read deadline passes, before the answer is written
	stalled  bool   // the read deadline passed: the client is not sending
	finished bool   // the body was read to its end: nothing to drain
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.src.Read(p)
	b.n += int64(n)
	if b.n > b.limit {
		n, err = 0, &bodyTooLargeError{b.limit}
	}
	var ne net.Error
	if !b.stalled && errors.As(err, &ne) && ne.Timeout() {
		b.stalled = true
		if b.onStall != nil {
			b.onStall()
		}
	}
	b.finished = b.finished || err == io.EOF
	if err != nil && b.done != nil && !b.stalled { // a stalled body keeps its deadline: the server must not wait on it
		b.done()
		b.done = nil
	}
	return n, err
}

func (b *limitedBody) Close() error { return nil }

// guarded reports whether a path needs an authenticated caller: every tool route, and the
// MCP endpoint when it is served (off, /mcp stays an unknown route: 404 for everyone).
func guarded(mcpEnabled bool) func(path string) bool {
	return func(p string) bool { return strings.HasPrefix(p, "/shed_") || mcpEnabled && p == mcpPath }
}

// limitBodies enforces the body limit of each tool route (limits, filled at registration):
// a Content-Length over it is refused before anything is read, a longer chunked body when
// it passes the limit, a body that does not arrive in time (bodyReadBase) when it stalls;
// then what the client still sends is drained (bounded) so that it reads the answer,
// whatever answered (BODY_TOO_LARGE, or an authentication error).
func limitBodies(limits map[string]int64, log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			limit, ok := limits[r.URL.Path]
			if !ok || r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			body, length := r.Body, r.ContentLength
			rc := http.NewResponseController(w)
			_ = rc.EnableFullDuplex() // answer first, drain after (HTTP/1 otherwise stops reading)
			lb := &limitedBody{src: body, limit: limit, done: func() { _ = rc.SetReadDeadline(time.Time{}) },
				onStall: func() { w.Header().Set("Connection", "close") }} // a stalled client gets its answer, then no more time
			defer func() {
				if lb.finished {
					return
				}
				_ = rc.Flush() // the answer leaves now; a client reading while it sends sees it at once
				if length <= drainMax && !lb.stalled {
					_ = rc.SetReadDeadline(time.Now().Add(drainTimeout))
					_, _ = io.CopyN(io.Discard, body, drainMax)
				}
			}()
			if length > limit {
				w.Header().Set("Connection", "close")
				writeError(w, log, requestID(r.Context()), (&bodyTooLargeError{limit}).coreError())
				return
			}
			_ = rc.SetReadDeadline(time.Now().Add(bodyReadBase + time.Duration(limit>>20)*time.Second))
			r.Body = lb
			next.ServeHTTP(w, r)
		})
	}
}
