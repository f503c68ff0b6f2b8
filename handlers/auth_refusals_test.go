package handlers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestAuthRefusalsLoggedAndCounted: every 401/403 at the door (a missing or wrong bearer
// key, an identity that is not a valid user id, a wrong /metrics token) is logged with the
// route, the reason and the client address, and counted by reason in /metrics; the
// credential that was refused appears in neither.
func TestAuthRefusalsLoggedAndCounted(t *testing.T) {
	const refused, scrapeKey = "wrong-key-0123456789-refused", "scrape-key-0123456789"
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key, "FILESHED_METRICS_TOKEN": scrapeKey})
	body := map[string]any{"zone": "storage"}
	user := map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "alice"}
	wantOK(t, e.post("shed_tree", body, user))
	for _, c := range []struct {
		headers map[string]string
		status  int
		code    string
	}{
		{nil, http.StatusUnauthorized, "AUTH_REQUIRED"},
		{map[string]string{"Authorization": "Bearer " + refused}, http.StatusUnauthorized, "AUTH_INVALID"},
		{map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "-rf"}, http.StatusForbidden, "INVALID_USER"},
	} {
		if r := e.post("shed_tree", body, c.headers); r.Status != c.status || r.Error != c.code {
			t.Fatalf("%v: status %d, %s", c.headers, r.Status, r.raw)
		}
	}
	if status, _ := scrape(t, e, refused); status != http.StatusUnauthorized {
		t.Fatalf("/metrics with a wrong token: %d", status)
	}
	status, metrics := scrape(t, e, scrapeKey)
	if status != http.StatusOK {
		t.Fatalf("/metrics: %d", status)
	}
	for _, want := range []string{
		`fileshed_auth_refusals_total{reason="AUTH_REQUIRED"} 1`,
		`fileshed_auth_refusals_total{reason="AUTH_INVALID"} 2`, // the tool's key and the metrics token
		`fileshed_auth_refusals_total{reason="INVALID_USER"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	var lines []map[string]any
	for _, l := range strings.Split(e.logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "authentication refused" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 4 {
		t.Fatalf("%d refusal lines, want 4:\n%s", len(lines), e.logs.String())
	}
	for i, want := range []struct{ route, reason string }{
		{"/shed_tree", "AUTH_REQUIRED"}, {"/shed_tree", "AUTH_INVALID"}, {"/shed_tree", "INVALID_USER"}, {"/metrics", "AUTH_INVALID"},
	} {
		l := lines[i]
		if l["route"] != want.route || l["reason"] != want.reason || l["status"] == nil || l["detail"] == "" ||
			!strings.HasPrefix(l["client"].(string), "127.0.0.1:") || l["level"] != "WARN" {
			t.Errorf("refusal %d: %v, want route %s, reason %s, status, detail and client", i, l, want.route, want.reason)
		}
	}
	if strings.Contains(e.logs.String(), refused) || strings.Contains(e.logs.String(), scrapeKey) || strings.Contains(e.logs.String(), key) {
		t.Error("a credential is logged")
	}
}
