package handlers

import (
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"

	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/openapi"
	"github.com/fileshed/fileshed/tools"
)

// Version is the server version shown in the OpenAPI document.
const Version = "0.2.0"

// Deps are what the HTTP edge needs; main and the tests build them the same way.
type Deps struct {
	// Tools are the tool families over the kernel (tools.New); the kernel's own methods are
	// reached through it too.
	Tools *tools.Set
	Auth  Authenticator
	Log   *slog.Logger
	// Ready reports readiness details for /readyz (nil: always ready).
	Ready func() (ok bool, details map[string]any)
	// metrics is set by New: every tool call is counted there.
	metrics *metrics
	// registry is set by New: every tool's handle, for the merged tools.
	registry *registry
	// limits is the body limit of each tool route, filled by tool() for limitBodies.
	limits map[string]int64
	// cfg is the configuration the routes are registered with (set by New, or by Spec).
	cfg *valves.Config
}

// New builds the whole HTTP handler: middleware, the tool operations, health routes. It is
// the one registration function used by main and by every handler test.
func New(d Deps) (http.Handler, huma.API) {
	d.cfg = d.Tools.Config()
	return register(d)
}

// Spec is the API that New registers for cfg, built without a service: nothing is opened or
// created, so the configuration can be checked against it (Check) and the spec printed
// (`fileshed openapi`) before, or without, a storage directory. Its routes must not be served.
func Spec(cfg *valves.Config) huma.API {
	_, api := register(Deps{cfg: cfg, Tools: &tools.Set{}})
	return api
}

// register builds the router and registers every route with d.cfg; d.Tools is only bound
// into the handlers, never called while registering (Spec has none).
func register(d Deps) (http.Handler, huma.API) {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	r := chi.NewRouter()
	d.limits = map[string]int64{}
	d.metrics = newMetrics(d.Tools.Service)
	r.Use(withRequestID, recoverer(d.Log), normalizePath, limitBodies(d.limits, d.Log), siteGuard(d.cfg, d.metrics, d.Log), authenticate(d.Auth, d.metrics, d.Log, guarded(d.cfg.MCP.Enabled)))
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		writeEnvelope(w, http.StatusNotFound, Envelope{Error: "NOT_FOUND", Message: "No such route: " + req.URL.Path,
			Details: map[string]any{}, Hint: "The tools are POST /shed_<name>; the spec is GET /openapi.json"})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		writeEnvelope(w, http.StatusMethodNotAllowed, Envelope{Error: "METHOD_NOT_ALLOWED", Message: req.Method + " is not allowed on " + req.URL.Path,
			Details: map[string]any{}, Hint: "Tools are called with POST and a JSON body"})
	})
	d.registry = &registry{handles: map[string]handleFunc{}, hints: map[string]hints{}}
	api := humachi.New(r, openapi.Config(Version))
	registerInfo(api, d)
	registerFiles(api, d)
	registerExec(api, d)
	registerFilesRead(api, d)
	registerSearch(api, d)
	registerFilesWrite(api, d)
	registerLockedit(api, d)
	registerGroups(api, d)
	registerArchive(api, d)
	registerLinks(r, api, d)
	registerBridges(api, d)
	registerSQLite(api, d)
	registerPages(api, d)
	registerEncryption(api, d)
	registerMerged(api, d)
	applyDescriptions(api, d.cfg.ToolDescriptions)
	openapi.Finish(api)
	if d.cfg.MCP.Enabled {
		mountMCP(r, api, d) // from the finished document: the tools the model sees, as it sees them
	}
	mountHealth(r, d)
	mountMetrics(r, d.metrics, d.cfg.Metrics.Token, d.Log)
	return r, api
}
