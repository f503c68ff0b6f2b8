package handlers_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/sandbox"
	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
	"github.com/fileshed/fileshed/internal/pgtest"
	"github.com/fileshed/fileshed/internal/testtool"
)

// seen records every error code answered during the package's tests, for the catalogue test.
var seen sync.Map

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.LauncherArg { // the test binary is its own exec launcher, as main is
		os.Exit(sandbox.LauncherMain(os.Args[2:]))
	}
	// Most parallel tests wait (a command's sleep, a timeout, a killed replica's lease, a
	// browser): four at a time overlap their waits on two cores (issue 34). Their events are
	// awaited, not slept for, and their clocks guard bounds of 2 s or more.
	testtool.ParallelAtLeast(4)
	code := pgtest.Run(m) // the tests, then the private PostgreSQL the replica tests started is stopped
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if code == 0 && os.Getenv("FILESHED_SKIP_CATALOGUE") == "" && !testing.Short() {
		var missing []string
		seen.Store(string(core.InternalError), true) // provoked by TestPanicBecomesInternalError
		// Without PostgreSQL TestStateDatabaseRefusingConnections skips (CI installs it and skips nothing).
		if !pgtest.Installed() {
			seen.Store(string(core.StateUnavailable), true)
		}
		for _, c := range core.Codes() {
			if _, ok := seen.Load(string(c)); !ok {
				missing = append(missing, string(c))
			}
		}
		if len(missing) > 0 && runAll() {
			os.Stderr.WriteString("error catalogue: codes never provoked by a handler test: " + strings.Join(missing, ", ") + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// runAll is false when -run selects a subset (the catalogue check needs the whole suite).
func runAll() bool {
	for _, a := range os.Args {
		if strings.HasPrefix(a, "-test.run") {
			return false
		}
	}
	return true
}

// env is a test server: real handlers, real storage directory, real SQLite.
type env struct {
	t    testing.TB
	srv  *httptest.Server
	base string
	cfg  *valves.Config
	logs *testtool.Buffer
	// stop closes the HTTP server and the service (once): a restart on the same storage
	// must stop the first server, which holds the storage lock.
	stop func()
}

// closer returns an idempotent stop of srv and svc.
func closer(srv *httptest.Server, svc interface{ Close() error }) func() {
	var once sync.Once
	return func() { once.Do(func() { srv.Close(); svc.Close() }) }
}

// config loads the embedded defaults with overrides given as FILESHED_* variables.
func config(t testing.TB, vars map[string]string) *valves.Config {
	t.Helper()
	defaults, err := os.ReadFile("../valves.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	if os.Getenv("FILESHED_TEST_STATE") == "postgres" && vars["FILESHED_STATE_DRIVER"] == "" {
		if vars["FILESHED_STORAGE_BASE_PATH"] == "" {
			vars = withPostgres(t, map[string]string{"FILESHED_STORAGE_BASE_PATH": base}, vars)
		} else {
			vars = withPostgres(t, vars)
		}
	}
	lookup := func(k string) (string, bool) {
		if k == "FILESHED_STORAGE_BASE_PATH" {
			return base, true
		}
		v, ok := vars[k]
		return v, ok
	}
	cfg, _, err := valves.Load(defaults, nil, lookup)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// withPostgres is the union of vars with the PostgreSQL state: a fresh database on the
// tests' private server, the same for every server started on one storage directory
// (FILESHED_STORAGE_BASE_PATH: a restart, a replica). FILESHED_TEST_STATE=postgres gives it
// to every test (.ci/run runs the lock, quota, link, group and versioning tests so).
func withPostgres(t testing.TB, vars ...map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{"FILESHED_STATE_DRIVER": "postgres"}
	for _, v := range vars {
		for k, x := range v {
			out[k] = x
		}
	}
	base := out["FILESHED_STORAGE_BASE_PATH"]
	url, ok := stateURLs.Load(base)
	if base == "" || !ok {
		url = pgtest.URL(t)
		if base != "" {
			stateURLs.Store(base, url)
		}
	}
	out["FILESHED_STATE_URL"] = url.(string)
	return out
}

// restartConfig is the configuration of a server restarted on e's storage with the valves
// vars: the same storage directory and the same state (the SQLite file lives in it; under
// FILESHED_TEST_STATE=postgres, the database withPostgres gave that directory).
func (e *env) restartConfig(t testing.TB, vars map[string]string) *valves.Config {
	t.Helper()
	all := map[string]string{"FILESHED_STORAGE_BASE_PATH": e.base}
	for k, v := range vars {
		all[k] = v
	}
	cfg := config(t, all)
	cfg.StorageBasePath = e.base
	return cfg
}

// stateURLs maps a storage directory to its PostgreSQL state (withPostgres).
var stateURLs sync.Map

// start builds the server exactly as main does, with the given valves.
func start(t testing.TB, vars map[string]string) *env {
	t.Helper()
	return serve(t, config(t, vars))
}

// serve builds the server exactly as main does, with a configuration from config (whose
// storage a test may prepare first).
func serve(t testing.TB, cfg *valves.Config) *env {
	t.Helper()
	logs := &testtool.Buffer{}
	h, _, svc, err := handlers.Build(cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	stop := closer(srv, svc)
	t.Cleanup(stop)
	return &env{t: t, srv: srv, base: cfg.StorageBasePath, cfg: cfg, logs: logs, stop: stop}
}

// spec decodes the server's /openapi.json into doc.
func (e *env) spec(doc any) {
	e.t.Helper()
	resp, err := http.Get(e.srv.URL + "/openapi.json")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(doc); err != nil {
		e.t.Fatal(err)
	}
}

// reply is a decoded envelope plus the HTTP status.
type reply struct {
	Status  int
	Success bool           `json:"success"`
	Data    map[string]any `json:"data"`
	Message string         `json:"message"`
	Error   string         `json:"error"`
	Details map[string]any `json:"details"`
	Hint    string         `json:"hint"`
	Usage   string         `json:"usage"`
	raw     string
}

// post calls a tool with a JSON body (string or value) and headers.
func (e *env) post(tool string, body any, headers map[string]string) reply {
	e.t.Helper()
	var rdr io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rdr = strings.NewReader(b)
	case []byte:
		rdr = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rdr = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/"+tool, rdr)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return e.do(req)
}

func (e *env) do(req *http.Request) reply {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{Status: resp.StatusCode, raw: string(raw)}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		e.t.Fatalf("%s %s: content type %q, body %s", req.Method, req.URL.Path, ct, raw)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		e.t.Fatalf("not an envelope: %s", raw)
	}
	e.check(req.URL.Path, r)
	return r
}

// check records an error envelope's code for the catalogue test and holds it to the
// contract: a hint, a details object, no host path.
func (e *env) check(what string, r reply) {
	e.t.Helper()
	if r.Error == "" {
		return
	}
	seen.Store(r.Error, true)
	if r.Hint == "" {
		e.t.Errorf("%s: error %s without hint", what, r.Error)
	}
	if r.Details == nil {
		e.t.Errorf("%s: error %s without a details object: %s", what, r.Error, r.raw)
	}
	if strings.Contains(r.raw, e.base) {
		e.t.Errorf("%s: host path leaked: %s", what, r.raw)
	}
}

// write creates a file in a user's zone directly on disk (setup only).
func (e *env) write(rel, content string) string {
	e.t.Helper()
	p := filepath.Join(e.base, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// wantError asserts a failed call with the code.
func wantError(t *testing.T, r reply, code string) {
	t.Helper()
	if r.Success || r.Error != code {
		t.Fatalf("want %s, got status %d: %s", code, r.Status, r.raw)
	}
}

// wantOK asserts a successful call.
func wantOK(t testing.TB, r reply) {
	t.Helper()
	if !r.Success || r.Status != http.StatusOK {
		t.Fatalf("want success, got status %d: %s", r.Status, r.raw)
	}
}
