package handlers

import (
	"crypto/subtle"
	"log/slog"
	"net/http"
	rtmetrics "runtime/metrics"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fileshed/fileshed/core"
)

// metrics is the Prometheus registry of one server (not the global one: tests build many).
// Labels are tool names and error codes only: never a user id, a path or a token.
type metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	refusals *prometheus.CounterVec
	quota    *prometheus.CounterVec
	auth     *prometheus.CounterVec
	// crossOrigin counts the requests siteGuard refused, by reason (host, origin).
	crossOrigin *prometheus.CounterVec
	downloads   *prometheus.CounterVec
	bytes       prometheus.Counter
	// operations times git commits and state database writes (core's Timings).
	operations *prometheus.HistogramVec
}

// sandboxCodes are the refusals of the command and SQL sandboxes, counted by code.
var sandboxCodes = map[string]bool{
	"COMMAND_FORBIDDEN": true, "ARGUMENT_FORBIDDEN": true, "ARGUMENT_REQUIRED": true,
	"COMMAND_NOT_FOUND": true, "SANDBOX_UNAVAILABLE": true, "SQL_FORBIDDEN": true, "ZIP_BOMB": true,
	"PATH_ESCAPE": true,
}

func newMetrics(svc *core.Service) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fileshed_tool_calls_total",
		Help: "Tool calls by tool and outcome code (OK on success)."}, []string{"tool", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "fileshed_tool_duration_seconds",
		Help:    "Duration of tool calls, by tool.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}}, []string{"tool"})
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fileshed_sandbox_refusals_total",
		Help: "Calls refused by the command or SQL sandbox or the confinement, by code."}, []string{"code"})
	m.quota = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fileshed_quota_refusals_total",
		Help: "Calls refused with QUOTA_EXCEEDED, by tool."}, []string{"tool"})
	m.auth = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fileshed_auth_refusals_total",
		Help: "Requests refused by authentication (401/403: tools and /metrics), by reason code."}, []string{"reason"})
	m.crossOrigin = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fileshed_cross_origin_refusals_total",
		Help: "Requests refused as coming from another web page (403 CROSS_ORIGIN_FORBIDDEN), by reason: origin (a cross-site request from an origin not in cors.allowed_origins) or host (a foreign Host on a loopback address: DNS rebinding)."}, []string{"reason"})
	m.downloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fileshed_link_downloads_total",
		Help: "Download link requests by HTTP status."}, []string{"status"})
	m.bytes = prometheus.NewCounter(prometheus.CounterOpts{Name: "fileshed_link_bytes_total",
		Help: "Bytes sent through download links."})
	m.operations = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "fileshed_operation_duration_seconds",
		Help:    "Duration of internal operations: git commits (git_commit, git_commit_all), history packing (git_pack), state database writes (db_quota_reserve, db_audit), waits for a lock (lock_wait).",
		Buckets: []float64{.0001, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10}}, []string{"op"})
	if svc != nil { // Spec registers routes without a service
		svc.SetTimings(func(op string, d time.Duration) { m.operations.WithLabelValues(op).Observe(d.Seconds()) })
	}
	running := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fileshed_commands_running",
		Help: "Commands (shed_exec, shed_lockedit_exec) running now."},
		func() float64 { return float64(svc.RunningCommands()) })
	m.reg.MustRegister(m.operations, m.calls, m.duration, m.refusals, m.quota, m.auth, m.crossOrigin, m.downloads, m.bytes, running, liveHeap(),
		lockConnections(svc, "in_use"), lockConnections(svc, "idle"), prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "fileshed_locks_lost_total", Help: "Locks lost while held (state.driver postgres: the database session that held them ended)."},
			func() float64 { return float64(svc.LockStats().Lost) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fileshed_journal_image_bytes_total",
			Help: "Bytes of before-images the change journal kept in users' journal areas (Storage; versioned zones keep theirs in their history)."},
			func() float64 { return float64(svc.JournalImageBytes()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fileshed_journal_evictions_total",
			Help: "Before-images dropped to keep a user's journal area within journal.max_percent of the quota (their changes become undoable: false)."},
			func() float64 { return float64(svc.JournalEvictions()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fileshed_replica_leader",
			Help: "1 while this replica leads the replicas of its storage (state.driver postgres: the start-up sweep, the cleaning after dead replicas), else 0."},
			func() float64 {
				if svc.Leading() {
					return 1
				}
				return 0
			}),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// lockConnections is the PostgreSQL lock connections of one state, in_use (holding or
// waiting for a lock) or idle (pooled); 0 with the SQLite state.
func lockConnections(svc *core.Service, state string) prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fileshed_lock_connections",
		Help: "PostgreSQL connections of the locks (state.driver postgres), by state: in_use or idle (pooled).", ConstLabels: prometheus.Labels{"state": state}},
		func() float64 {
			st := svc.LockStats()
			if state == "idle" {
				return float64(st.Idle)
			}
			return float64(st.InUse)
		})
}

// liveHeap is the heap the last garbage collection found reachable (runtime/metrics
// /gc/heap/live:bytes): unlike go_memstats_heap_inuse_bytes it excludes the garbage awaiting
// the next collection, so a leak shows as its steady rise (the soak bench samples it).
func liveHeap() prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fileshed_go_heap_live_bytes",
		Help: "Heap bytes reachable at the end of the last garbage collection."},
		func() float64 {
			sample := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
			rtmetrics.Read(sample)
			return float64(sample[0].Value.Uint64())
		})
}

// observe records one tool call.
func (m *metrics) observe(tool, code string, d time.Duration) {
	m.calls.WithLabelValues(tool, code).Inc()
	m.duration.WithLabelValues(tool).Observe(d.Seconds())
	switch {
	case code == "QUOTA_EXCEEDED":
		m.quota.WithLabelValues(tool).Inc()
	case sandboxCodes[code]:
		m.refusals.WithLabelValues(code).Inc()
	}
}

// refused logs and counts a request refused by authentication (status 401 or 403), so that
// an operator sees a misconfigured Open WebUI connection or someone trying keys: the route
// (cut short), the reason code and message, the client address. Never the credential: the
// reasons are fixed messages that do not quote it.
func (m *metrics) refused(log *slog.Logger, r *http.Request, status int, reason, detail string) {
	m.auth.WithLabelValues(reason).Inc()
	route := r.URL.Path
	if len(route) > 128 {
		route = route[:128] + "..."
	}
	log.Warn("authentication refused", "request_id", requestID(r.Context()), "route", route, "status", status,
		"reason", reason, "detail", detail, "client", r.RemoteAddr)
}

// mountMetrics serves GET /metrics (hidden from the spec), behind a bearer token when
// metrics.token is set (compared in constant time).
func mountMetrics(r chi.Router, m *metrics, token string, log *slog.Logger) {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	r.Get("/metrics", func(w http.ResponseWriter, req *http.Request) {
		if token != "" {
			want := []byte("Bearer " + token)
			if subtle.ConstantTimeCompare([]byte(req.Header.Get("Authorization")), want) != 1 {
				reason := string(core.AuthInvalid)
				if req.Header.Get("Authorization") == "" {
					reason = string(core.AuthRequired)
				}
				m.refused(log, req, http.StatusUnauthorized, reason, "metrics.token required")
				w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
				http.Error(w, "metrics need the bearer token (metrics.token)", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, req)
	})
}
