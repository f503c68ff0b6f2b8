package handlers_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/handlers"
	"github.com/fileshed/fileshed/internal/testtool"
)

// crossSite sends one request as a browser page would (the headers given, Host when set)
// and returns the decoded answer with its headers.
func (e *env) crossSite(method, path, body string, headers map[string]string) (reply, http.Header) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	setHeaders(req, headers)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{Status: resp.StatusCode, raw: string(raw)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(raw, &r)
		e.check(method+" "+path, r)
	}
	return r, resp.Header
}

// TestCrossSiteSimpleRequestCannotDeleteFiles: the default server (auth.mode none, loopback,
// default cors.allowed_origins) refuses what any web page the user opens could send: a CORS
// "simple request" (text/plain, no preflight) or a JSON one, known cross-site by Origin or by
// Sec-Fetch-Site, on every tool route and on /mcp, with 403 CROSS_ORIGIN_FORBIDDEN, no
// Access-Control-Allow-Origin, the file untouched, a warning logged and the refusal counted.
// Clients that send neither header (curl, Open WebUI's backend, desktop MCP clients) pass.
func TestCrossSiteSimpleRequestCannotDeleteFiles(t *testing.T) {
	t.Parallel()
	e := start(t, mcpOn)
	file := e.write("users/local/Storage/data/keep.txt", "precious\n")
	del := `{"zone":"storage","path":"keep.txt"}`
	cases := []struct {
		name, path, body string
		headers          map[string]string
	}{
		{"simple request text/plain", "/shed_delete", del, map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}},
		{"json with origin", "/shed_delete", del, map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}},
		{"fetch metadata only", "/shed_delete", del, map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"}},
		{"same site other port", "/shed_delete", del, map[string]string{"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"}},
		{"null origin", "/shed_delete", del, map[string]string{"Origin": "null", "Content-Type": "text/plain"}},
		{"merged tool", "/shed_transfer", `{"action":"storage_to_documents","src":"keep.txt","dest":"keep.txt"}`, map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}},
		{"mcp", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}},
	}
	for _, tc := range cases {
		r, h := e.crossSite(http.MethodPost, tc.path, tc.body, tc.headers)
		if r.Status != http.StatusForbidden || r.Error != "CROSS_ORIGIN_FORBIDDEN" || !strings.Contains(r.Hint, "FILESHED_CORS_ALLOWED_ORIGINS") {
			t.Errorf("%s: want 403 CROSS_ORIGIN_FORBIDDEN with the valve in the hint, got %d: %s", tc.name, r.Status, r.raw)
		}
		if a := h.Get("Access-Control-Allow-Origin"); a != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q: the page could read the answer", tc.name, a)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "precious\n" {
		t.Fatalf("the file was touched by a cross-site request: %q %v", b, err)
	}
	if n := strings.Count(e.logs.String(), `"msg":"cross-origin request refused"`); n != len(cases) {
		t.Errorf("%d refusals logged, want %d:\n%s", n, len(cases), e.logs.String())
	}
	if _, body := scrape(t, e, ""); !strings.Contains(body, `fileshed_cross_origin_refusals_total{reason="origin"} `+itoa(len(cases))) {
		t.Errorf("refusals not counted:\n%s", grepLines(body, "cross_origin"))
	}
	// Without Origin or Sec-Fetch-Site (not a browser), and from the server's own origin.
	r, _ := e.crossSite(http.MethodPost, "/shed_tree", `{"zone":"storage"}`, map[string]string{"Content-Type": "application/json"})
	wantOK(t, r)
	r, _ = e.crossSite(http.MethodPost, "/shed_tree", `{"zone":"storage"}`, map[string]string{"Origin": e.srv.URL, "Sec-Fetch-Site": "same-origin"})
	wantOK(t, r)
	wantOK(t, e.post("shed_delete", del, nil))
}

// TestCrossSiteTrustedOrigin: by default the one origin trusted is openwebui.url's (Open
// WebUI's page calls a user's direct tool server from the browser): its preflight is
// answered and its calls pass with Access-Control-Allow-Origin naming it (never "*"); any
// other origin gets no CORS headers and no call. A list in cors.allowed_origins replaces it.
func TestCrossSiteTrustedOrigin(t *testing.T) {
	t.Parallel()
	owui := "http://chat.example:3000"
	cases := []struct {
		name    string
		vars    map[string]string
		trusted []string
		foreign []string
	}{
		{"openwebui.url by default", map[string]string{"FILESHED_OPENWEBUI_URL": owui + "/"}, []string{owui}, []string{"http://evil.example", "http://chat.example", "https://chat.example:3000", "http://chat.example:3000.evil.example"}},
		{"nothing set trusts no page", nil, nil, []string{owui, "http://evil.example"}},
		{"an explicit list replaces it", map[string]string{"FILESHED_OPENWEBUI_URL": "http://openwebui:8080", "FILESHED_CORS_ALLOWED_ORIGINS": "https://chat.example.com"},
			[]string{"https://chat.example.com"}, []string{"http://openwebui:8080", "http://evil.example"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, tc.vars)
			for _, o := range tc.trusted {
				r, h := e.crossSite(http.MethodOptions, "/shed_tree", "", map[string]string{"Origin": o, "Access-Control-Request-Method": "POST",
					"Access-Control-Request-Headers": "authorization,content-type"})
				if r.Status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != o || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") {
					t.Errorf("preflight from %s: %d %v", o, r.Status, h)
				}
				r, h = e.crossSite(http.MethodPost, "/shed_tree", `{"zone":"storage"}`, map[string]string{"Origin": o, "Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"})
				if !r.Success || h.Get("Access-Control-Allow-Origin") != o || !strings.Contains(h.Get("Vary"), "Origin") {
					t.Errorf("call from %s: %d %v %s", o, r.Status, h, r.raw)
				}
			}
			for _, o := range tc.foreign {
				r, h := e.crossSite(http.MethodOptions, "/shed_tree", "", map[string]string{"Origin": o, "Access-Control-Request-Method": "POST"})
				if r.Status == http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "" {
					t.Errorf("preflight from %s answered: %d %v", o, r.Status, h)
				}
				r, h = e.crossSite(http.MethodPost, "/shed_tree", `{"zone":"storage"}`, map[string]string{"Origin": o, "Content-Type": "text/plain"})
				if r.Error != "CROSS_ORIGIN_FORBIDDEN" || h.Get("Access-Control-Allow-Origin") != "" {
					t.Errorf("call from %s: %d %v %s", o, r.Status, h, r.raw)
				}
			}
		})
	}
}

// TestCrossSiteWildcardOnlyWhenSet: "*" is never the default, and when set explicitly it
// opens every route to every page again (Access-Control-Allow-Origin: *), /mcp included.
func TestCrossSiteWildcardOnlyWhenSet(t *testing.T) {
	t.Parallel()
	if e := start(t, nil); len(e.cfg.CORS.AllowedOrigins) != 0 {
		t.Fatalf("default cors.allowed_origins %q", e.cfg.CORS.AllowedOrigins)
	}
	e := start(t, with(mcpOn, map[string]string{"FILESHED_CORS_ALLOWED_ORIGINS": "*"}))
	r, h := e.crossSite(http.MethodPost, "/shed_tree", `{"zone":"storage"}`, map[string]string{"Origin": "http://any.example", "Content-Type": "text/plain"})
	if !r.Success || h.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("with *: %d %v %s", r.Status, h, r.raw)
	}
	if status, _, body := e.mcpPost(listCall(), map[string]string{"Origin": "http://any.example"}); status != http.StatusOK || !strings.Contains(body, "shed_read") {
		t.Fatalf("/mcp with *: %d %.300s", status, body)
	}
}

// TestCrossSiteDownloadLinkAndSpecStayOpen: safe methods pass whatever the origin: a
// download link opened from a page, the spec Open WebUI's frontend fetches.
func TestCrossSiteDownloadLinkAndSpecStayOpen(t *testing.T) {
	t.Parallel()
	e := startLinks(t, map[string]string{"FILESHED_OPENWEBUI_URL": "https://chat.example"})
	e.write("users/alice/Storage/data/report.txt", "hello link")
	r := e.post("shed_link_create", map[string]any{"zone": "storage", "path": "report.txt"}, as("alice"))
	wantOK(t, r)
	got := e.get("GET", r.Data["url"].(string), map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
	if got.status != http.StatusOK || got.body != "hello link" || got.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("link from another site: %d %q %v", got.status, got.body, got.header)
	}
	got = e.get("GET", r.Data["url"].(string), map[string]string{"Origin": "https://chat.example", "Sec-Fetch-Site": "cross-site"})
	if got.status != http.StatusOK || got.header.Get("Access-Control-Allow-Origin") != "https://chat.example" {
		t.Fatalf("link from Open WebUI's page: %d %v", got.status, got.header)
	}
	spec, _ := e.crossSite(http.MethodGet, "/openapi.json", "", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
	if spec.Status != http.StatusOK {
		t.Fatalf("spec: %d", spec.Status)
	}
}

// TestCrossSiteDNSRebinding: a page whose name was rebound to 127.0.0.1 is same-origin with
// the server as far as the browser knows (Origin and Host both its own name): a request that
// reached a loopback address is refused unless Host names the server as it is known
// (loopback names, IP addresses, listen's host, public_url's host), on every route.
func TestCrossSiteDNSRebinding(t *testing.T) {
	t.Parallel()
	e := start(t, with(mcpOn, map[string]string{"FILESHED_PUBLIC_URL": "https://files.example.com"}))
	e.write("users/local/Storage/data/keep.txt", "precious\n")
	port := e.srv.Listener.Addr().(*net.TCPAddr).Port
	refused := []string{"evil.example:" + itoa(port), "evil.example", "EVIL.example.:8000", "localhost.evil.example", "files.example.com.evil.example"}
	for _, host := range refused {
		for _, path := range []string{"/shed_delete", "/mcp", "/openapi.json", "/metrics", "/readyz"} {
			method, body := http.MethodPost, `{"zone":"storage","path":"keep.txt"}`
			if path[1] != 's' && path != "/mcp" {
				method, body = http.MethodGet, ""
			}
			r, _ := e.crossSite(method, path, body, map[string]string{"Host": host, "Origin": "http://" + host, "Content-Type": "application/json",
				"Accept": "application/json, text/event-stream"})
			if r.Status != http.StatusForbidden || r.Error != "CROSS_ORIGIN_FORBIDDEN" || !strings.Contains(r.Hint, "FILESHED_PUBLIC_URL") {
				t.Errorf("Host %s, %s %s: %d %s", host, method, path, r.Status, r.raw)
			}
		}
	}
	for _, host := range []string{"localhost:" + itoa(port), "LOCALHOST", "app.localhost:1", "127.0.0.1:" + itoa(port), "[::1]:8000", "files.example.com", "files.example.com:443"} {
		r, _ := e.crossSite(http.MethodPost, "/shed_tree", `{"zone":"storage"}`, map[string]string{"Host": host, "Content-Type": "application/json"})
		if !r.Success {
			t.Errorf("Host %s refused: %d %s", host, r.Status, r.raw)
		}
	}
	if _, body := scrape(t, e, ""); !strings.Contains(body, `fileshed_cross_origin_refusals_total{reason="host"} `+itoa(len(refused)*5)) {
		t.Errorf("host refusals not counted:\n%s", grepLines(body, "cross_origin"))
	}
}

// TestCrossSiteHostOfADeployment: a server reached on an address that is not loopback (Open
// WebUI's backend calls http://fileshed:8000 in a container network, with Host
// fileshed:8000) answers whatever the Host: DNS rebinding aims at loopback services, and the
// names of a real deployment cannot be listed.
func TestCrossSiteHostOfADeployment(t *testing.T) {
	t.Parallel()
	ip := nonLoopbackIP(t)
	cfg := config(t, map[string]string{"FILESHED_LISTEN": net.JoinHostPort(ip, "0"), "FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key})
	h, _, svc, err := handlers.Build(cfg, slog.New(slog.NewJSONHandler(&testtool.Buffer{}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skip("cannot listen on", ip, err)
	}
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	e := &env{t: t, srv: srv, base: cfg.StorageBasePath, cfg: cfg, stop: closer(srv, svc)}
	t.Cleanup(e.stop)
	for _, host := range []string{"fileshed:8000", "fileshed.tools.svc.cluster.local"} {
		r, _ := e.crossSite(http.MethodPost, "/shed_tree", `{"zone":"storage"}`, map[string]string{"Host": host, "Content-Type": "application/json",
			"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "alice"})
		if !r.Success {
			t.Errorf("Host %s: %d %s", host, r.Status, r.raw)
		}
	}
	// The Origin check still holds there.
	r, _ := e.crossSite(http.MethodPost, "/shed_tree", `{"zone":"storage"}`, map[string]string{"Host": "fileshed:8000", "Origin": "http://evil.example",
		"Content-Type": "text/plain", "Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "alice"})
	if r.Error != "CROSS_ORIGIN_FORBIDDEN" {
		t.Errorf("foreign origin on a deployment: %d %s", r.Status, r.raw)
	}
}

// nonLoopbackIP is an IPv4 address of this machine that is not loopback (skips without one).
func nonLoopbackIP(t *testing.T) string {
	t.Helper()
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("no non-loopback IPv4 address on this machine")
	return ""
}

// itoa is strconv.Itoa, short for the expected metric lines.
func itoa(n int) string { return strconv.Itoa(n) }

// setHeaders sets headers on req; "Host" sets the request's Host (a header map cannot).
func setHeaders(req *http.Request, headers map[string]string) {
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
}
