package handlers_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/handlers"
)

// linksKey is the static bearer key of the links tests (headers mode: two users).
const linksKey = "links-test-key-0123456789"

// startLinks starts a server whose public_url is its own address (known before the
// configuration is built), in headers mode, with extra valves.
func startLinks(t testing.TB, vars map[string]string) *env {
	t.Helper()
	return startLinksOn(t, vars, nil)
}

// startLinksOn is startLinks with a hook that may set the HTTP server's fields (timeouts)
// before it starts.
func startLinksOn(t testing.TB, vars map[string]string, setup func(*http.Server)) *env {
	t.Helper()
	var h http.Handler
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	all := map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": linksKey,
		"FILESHED_PUBLIC_URL": "http://" + srv.Listener.Addr().String()}
	for k, v := range vars {
		all[k] = v
	}
	cfg := config(t, all)
	if b := vars["FILESHED_STORAGE_BASE_PATH"]; b != "" {
		cfg.StorageBasePath = b // a restart on the same storage
	}
	h, _, svc, err := handlers.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(srv.Config)
	}
	srv.Start()
	stop := closer(srv, svc)
	t.Cleanup(stop)
	return &env{t: t, srv: srv, base: cfg.StorageBasePath, cfg: cfg, stop: stop}
}

// as is the headers of user id.
func as(id string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + linksKey, "X-OpenWebUI-User-Id": id}
}

// link creates a link as user and returns its data.
func (e *env) link(user string, args map[string]any) map[string]any {
	e.t.Helper()
	r := e.post("shed_link_create", args, as(user))
	wantOK(e.t, r)
	return r.Data
}

// fetched is a download answer.
type fetched struct {
	status int
	header http.Header
	body   string
}

// get fetches a URL (GET or HEAD) with optional headers; the answer must never be JSON.
func (e *env) get(method, url string, headers map[string]string) fetched {
	e.t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	setHeaders(req, headers)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		e.t.Errorf("%s %s answered JSON: %s", method, url, b)
	}
	if strings.Contains(string(b), e.base) {
		e.t.Errorf("%s %s: host path leaked", method, url)
	}
	return fetched{resp.StatusCode, resp.Header, string(b)}
}
