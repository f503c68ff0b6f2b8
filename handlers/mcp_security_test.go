package handlers_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/handlers"
)

// TestMCPForeignOriginRefused: a browser page on another site cannot drive /mcp (in mode
// none it needs no credential at all): siteGuard refuses it with 403 CROSS_ORIGIN_FORBIDDEN as
// on every route; an origin named in cors.allowed_origins, the server's own origin and clients
// that send none (desktop clients, Open WebUI's backend) pass.
func TestMCPForeignOriginRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		allowed string // cors.allowed_origins
		headers map[string]string
		status  int
	}{
		{"no origin", "", nil, http.StatusOK},
		{"foreign origin", "", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"foreign site by fetch metadata", "", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"foreign origin under a named list", `["https://chat.example"]`, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"look-alike of a named origin", `["https://chat.example"]`, map[string]string{"Origin": "https://chat.example.evil.example"}, http.StatusForbidden},
		{"named origin", `["https://chat.example"]`, map[string]string{"Origin": "https://chat.example", "Sec-Fetch-Site": "cross-site"}, http.StatusOK},
		{"same origin", "", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "self"}, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			valves := mcpOn
			if tc.allowed != "" {
				valves = with(mcpOn, map[string]string{"FILESHED_CORS_ALLOWED_ORIGINS": tc.allowed})
			}
			e := start(t, valves)
			h := map[string]string{}
			for k, v := range tc.headers {
				h[k] = strings.ReplaceAll(v, "self", e.srv.URL)
			}
			status, header, body := e.mcpPost(listCall(), h)
			if tc.status == http.StatusForbidden {
				e.wantEnvelope(status, header, body, http.StatusForbidden, "CROSS_ORIGIN_FORBIDDEN")
				return
			}
			if status != tc.status || !strings.Contains(body, "shed_read") {
				t.Fatalf("want %d and the tool list, got %d: %.300s", tc.status, status, body)
			}
		})
	}
}

// TestMCPDNSRebindingGuard: a request that reached the loopback listener with a foreign Host
// (a page whose name was rebound to 127.0.0.1) is refused by siteGuard, as on every route;
// a reverse proxy on the same host that keeps the public Host passes once public_url names it.
func TestMCPDNSRebindingGuard(t *testing.T) {
	t.Parallel()
	for _, publicURL := range []string{"", "https://files.example.com"} {
		e := start(t, with(mcpOn, map[string]string{"FILESHED_PUBLIC_URL": publicURL}))
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp", listCall())
		req.Host = "files.example.com"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if publicURL == "" {
			e.wantEnvelope(resp.StatusCode, resp.Header, string(b), http.StatusForbidden, "CROSS_ORIGIN_FORBIDDEN")
		} else if resp.StatusCode != http.StatusOK {
			t.Fatalf("public_url %s: %d %s", publicURL, resp.StatusCode, b)
		}
	}
}

// TestMCPHeadersInCORSAllowList: a browser-based MCP client (the MCP Inspector) may send the
// MCP headers cross-origin: the preflight allows them.
func TestMCPHeadersInCORSAllowList(t *testing.T) {
	e := start(t, with(mcpOn, map[string]string{"FILESHED_CORS_ALLOWED_ORIGINS": `["http://localhost:6274"]`}))
	req, _ := http.NewRequest(http.MethodOptions, e.srv.URL+"/mcp", nil)
	req.Header.Set("Origin", "http://localhost:6274")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "mcp-protocol-version, mcp-method, mcp-name, content-type")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"mcp-protocol-version", "mcp-session-id", "mcp-method", "mcp-name"} {
		if !strings.Contains(allowed, h) {
			t.Errorf("preflight does not allow %s: %q", h, allowed)
		}
	}
}

// TestMCPBodyOverTheToolLimit: each call meets its own tool's body limit, as on HTTP (a
// tool result the model reads), and /mcp refuses a body over the largest limit before any
// JSON-RPC, announced or chunked.
func TestMCPBodyOverTheToolLimit(t *testing.T) {
	e := start(t, with(mcpOn, map[string]string{"FILESHED_MAX_BODY_MB": "2"}))
	cs := e.mcpConnect(nil)
	pad := strings.Repeat("x", 3<<19) // 1.5 MiB: over shed_tree's 1 MiB, under shed_create_file's 2 MiB
	r, isErr := e.mcpCall(cs, "shed_tree", map[string]any{"zone": "storage", "padding": pad})
	if !isErr || r.Error != "BODY_TOO_LARGE" || r.Details["limit_bytes"] != float64(1<<20) {
		t.Fatalf("shed_tree with 1.5 MiB: %.300s", r.raw)
	}
	if r, isErr := e.mcpCall(cs, "shed_create_file", map[string]any{"zone": "storage", "path": "big.txt", "content": pad}); isErr {
		t.Fatalf("shed_create_file with 1.5 MiB: %.300s", r.raw)
	}
	limit := 2<<20 + 64<<10
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", limit) + `"}}`
	status, header, body := e.mcpPost(strings.NewReader(big), nil)
	e.wantEnvelope(status, header, body, http.StatusRequestEntityTooLarge, "BODY_TOO_LARGE")
	// Chunked: no Content-Length to refuse up front, the limit stops the read.
	status, header, body = e.mcpPost(io.MultiReader(strings.NewReader(big)), nil)
	e.wantEnvelope(status, header, body, http.StatusRequestEntityTooLarge, "BODY_TOO_LARGE")
}

// TestMCPSlowBodyIsCutOff: a client that trickles its JSON-RPC body does not hold POST /mcp
// forever: the body deadline of the tools applies (here 1 s + 1 s per MiB of the limit).
func TestMCPSlowBodyIsCutOff(t *testing.T) {
	if !alone(t) { // sets a package variable
		return
	}
	defer handlers.SetBodyReadBase(time.Second)()
	e := start(t, with(mcpOn, map[string]string{"FILESHED_MAX_BODY_MB": "1"}))
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", len(body))
	answered := make(chan reply, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- reply{raw: err.Error()}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		r := reply{Status: resp.StatusCode, raw: string(b)}
		_ = json.Unmarshal(b, &r)
		answered <- r
	}()
	start := time.Now()
	for i := 0; i < len(body); i++ {
		select {
		case r := <-answered:
			if r.Status != http.StatusRequestTimeout || r.Error != "INVALID_PARAMETER" || !strings.Contains(r.Message, "did not arrive in time") {
				t.Fatalf("after %v: %d %s", time.Since(start), r.Status, r.raw)
			}
			e.check("POST /mcp", r)
			return
		case <-time.After(300 * time.Millisecond):
		}
		if _, err := conn.Write([]byte{body[i]}); err != nil {
			break
		}
	}
	t.Fatalf("a body trickled over %v was never cut off", time.Since(start))
}
