package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	big := `{"zone":"storage","path":"` + strings.Repeat("a", 10<<20) + `"}`
	r := e.post("shed_tree", big, nil)
	if r.Status != http.StatusRequestEntityTooLarge || r.Error != "BODY_TOO_LARGE" {
		t.Fatalf("got %d %s", r.Status, r.raw[:min(len(r.raw), 300)])
	}
}

func TestNoRedirectsAndNormalisedPaths(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	for _, p := range []string{"//shed_tree", "/shed_tree/", "/./shed_tree"} {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+p, strings.NewReader(`{"zone":"storage"}`))
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d (redirects are never answered)", p, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/nope", nil)
	r := e.do(req)
	if r.Status != 404 || r.Error != "NOT_FOUND" {
		t.Fatalf("unknown route: %d %s", r.Status, r.raw)
	}
	req, _ = http.NewRequest(http.MethodGet, e.srv.URL+"/shed_tree", nil)
	if r := e.do(req); r.Status != 405 {
		t.Fatalf("GET on a tool: %d %s", r.Status, r.raw)
	}
}

func TestCORSPreflightBeforeAuth(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key, "FILESHED_CORS_ALLOWED_ORIGINS": "https://chat.example"})
	req, _ := http.NewRequest(http.MethodOptions, e.srv.URL+"/shed_tree", nil)
	req.Header.Set("Origin", "https://chat.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") == "" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	// The actual call still needs the key, and carries the CORS header on its 401.
	req, _ = http.NewRequest(http.MethodPost, e.srv.URL+"/shed_tree", strings.NewReader(`{"zone":"storage"}`))
	req.Header.Set("Origin", "https://chat.example")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("Access-Control-Allow-Origin") == "" {
		t.Fatalf("call without key: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestCORSRestrictedOrigins(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_CORS_ALLOWED_ORIGINS": `["https://ok.example"]`})
	for origin, want := range map[string]string{"https://ok.example": "https://ok.example", "https://evil.example": ""} {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/shed_stats", nil)
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != want {
			t.Fatalf("origin %s: allow-origin %q, want %q", origin, got, want)
		}
	}
}

func TestSpecIsPublic(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key})
	for _, p := range []string{"/openapi.json", "/openapi-3.0.json", "/healthz", "/readyz"} {
		resp, err := http.Get(e.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !json.Valid(b) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/") {
			t.Fatalf("%s: %d %s", p, resp.StatusCode, b[:min(len(b), 200)])
		}
	}
}

func TestInfoTools(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.post("shed_help", nil, nil)
	wantOK(t, r)
	if !strings.Contains(r.Data["help"].(string), "Zones") || r.Data["howtos"].(map[string]any)["paths"] == nil {
		t.Fatalf("help: %s", r.raw)
	}
	wantOK(t, e.post("shed_help", map[string]any{"howto": "PATHS"}, nil))
	full := e.post("shed_help", map[string]any{"howto": "full"}, nil)
	wantOK(t, full)
	if !strings.Contains(full.Data["help"].(string), "PATH_STARTS_WITH_ZONE") {
		t.Fatalf("full help lacks the paths guide")
	}
	wantError(t, e.post("shed_help", map[string]any{"howto": "nope"}, nil), "INVALID_PARAMETER")

	e.write("users/local/Storage/data/a.txt", strings.Repeat("x", 1000))
	e.write("users/local/Uploads/chat/b.txt", "12345")
	r = e.post("shed_stats", nil, nil)
	wantOK(t, r)
	st := r.Data["storage"].(map[string]any)
	if st["size_bytes"] != float64(1000) || st["files"] != float64(1) {
		t.Fatalf("stats: %s", r.raw)
	}
	if r.Data["total"].(map[string]any)["size_bytes"] != float64(1005) {
		t.Fatalf("total: %s", r.raw)
	}
	r = e.post("shed_parameters", `{}`, nil)
	wantOK(t, r)
	if r.Data["quota_per_user_mb"] != float64(1000) || strings.Contains(r.raw, e.base) {
		t.Fatalf("parameters: %s", r.raw)
	}
}

// TestCallsWithoutContentType: curl -XPOST without -d or -H sends no Content-Type; every
// kind of tool must still answer with the envelope (a zero-argument tool used to panic).
func TestCallsWithoutContentType(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	for tool, body := range map[string]string{"shed_stats": "", "shed_parameters": "", "shed_help": "",
		"shed_tree": `{"zone":"storage"}`} {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/"+tool, strings.NewReader(body))
		r := e.do(req)
		if !r.Success {
			t.Fatalf("%s without Content-Type: %d %s", tool, r.Status, r.raw)
		}
	}
}
