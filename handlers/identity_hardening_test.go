package handlers_test

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
	"github.com/fileshed/fileshed/handlers"
	"github.com/fileshed/fileshed/internal/testtool"
)

// TestJWTClaimsChecked: Open WebUI's forwarded JWT (backend/open_webui/utils/headers.py,
// _mint_forward_user_jwt) carries sub, email, name, role, iss "open-webui", iat and exp; a
// token without exp, not yet valid, issued in the future or by another issuer is refused.
func TestJWTClaimsChecked(t *testing.T) {
	const secret = "jwt-secret-abc-0123"
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "jwt", "FILESHED_AUTH_API_KEY": key, "FILESHED_AUTH_JWT_SECRET": secret})
	now := time.Now().Unix()
	owui := func(extra map[string]any) map[string]any {
		c := map[string]any{"sub": "carol-3", "email": "c@x", "name": "Carol", "role": "user", "iss": "open-webui", "iat": now, "exp": now + 300}
		for k, v := range extra {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	cases := []struct {
		name   string
		claims map[string]any
		code   string
	}{
		{"as Open WebUI mints it", owui(nil), ""},
		{"iat within the leeway", owui(map[string]any{"iat": now + 30}), ""},
		{"exp just passed, within the leeway", owui(map[string]any{"exp": now - 20}), ""},
		{"no exp", owui(map[string]any{"exp": nil}), "AUTH_INVALID"},
		{"exp long passed", owui(map[string]any{"exp": now - 600}), "AUTH_INVALID"},
		{"nbf in the future", owui(map[string]any{"nbf": now + 3600}), "AUTH_INVALID"},
		{"iat a year ahead", owui(map[string]any{"iat": now + 365*24*3600}), "AUTH_INVALID"},
		{"other issuer", owui(map[string]any{"iss": "evil"}), "AUTH_INVALID"},
		{"no issuer", owui(map[string]any{"iss": nil}), "AUTH_INVALID"},
		{"id claim only", owui(map[string]any{"sub": nil, "id": "dave-4"}), "AUTH_INVALID"},
		{"exp as a string", owui(map[string]any{"exp": "9999999999"}), "AUTH_INVALID"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Jwt": signJWT(t, "HS256", secret, tc.claims)}
			r := e.post("shed_tree", map[string]any{"zone": "storage"}, h)
			if r.Error != tc.code {
				t.Fatalf("want %q, got %d: %s", tc.code, r.Status, r.raw)
			}
			if tc.code != "" && (r.Status != 401 || !strings.Contains(r.Hint, "FORWARD_USER_INFO_HEADER_JWT")) {
				t.Fatalf("refusal must be 401 with a hint naming Open WebUI's setting: %s", r.raw)
			}
		})
	}
}

// TestJWTIssuerValve: auth.jwt_issuer pins another issuer, or none when empty.
func TestJWTIssuerValve(t *testing.T) {
	const secret = "s2-jwt-secret-0123"
	now := time.Now().Unix()
	claims := map[string]any{"sub": "erin-5", "iss": "corp-gw", "iat": now, "exp": now + 60}
	for issuer, code := range map[string]string{"corp-gw": "", "": "", "open-webui": "AUTH_INVALID"} {
		e := start(t, map[string]string{"FILESHED_AUTH_MODE": "jwt", "FILESHED_AUTH_API_KEY": key,
			"FILESHED_AUTH_JWT_SECRET": secret, "FILESHED_AUTH_JWT_ISSUER": issuer})
		h := map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Jwt": signJWT(t, "HS256", secret, claims)}
		if r := e.post("shed_tree", map[string]any{"zone": "storage"}, h); r.Error != code {
			t.Fatalf("jwt_issuer %q: want %q, got %s", issuer, code, r.raw)
		}
	}
}

// TestHeadersModeDecodesName: Open WebUI percent-encodes the user name it forwards
// (quote(name, safe=' ')) and the group names of {{USER_GROUPS}}; the git author and the
// group ids are the decoded text.
func TestHeadersModeDecodesName(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key})
	h := map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "u-7",
		"X-OpenWebUI-User-Name": "Alice %C3%9Cn%C3%AFcode 100%25+", "X-Shed-Groups": "team%2Da, team-b"}
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "a.txt", "content": "x"}, h))
	r := e.post("shed_history", map[string]any{"zone": "documents", "path": "a.txt"}, h)
	wantOK(t, r)
	if !strings.Contains(r.raw, "Alice Ünïcode 100%+") || strings.Contains(r.raw, "%C3") {
		t.Fatalf("author not decoded: %s", r.raw)
	}
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "team-a"}, h))
	// A malformed escape is kept as sent rather than refused.
	h["X-OpenWebUI-User-Name"] = "Bob %zz"
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "b.txt", "content": "x"}, h))
	r = e.post("shed_history", map[string]any{"zone": "documents", "path": "b.txt"}, h)
	if !strings.Contains(r.raw, "Bob %zz") {
		t.Fatalf("malformed escape: %s", r.raw)
	}
}

// TestIDsStartWithLetterOrDigit: a user, group or conversation id that starts with '-' or
// '_' could read as an option to a command; user and group ids are refused, a conversation
// id is made safe.
func TestIDsStartWithLetterOrDigit(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key})
	h := func(user, groups, chat string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": user, "X-Shed-Groups": groups, "X-OpenWebUI-Chat-Id": chat}
	}
	for _, bad := range []string{"-rf", "_x", "--help"} {
		if r := e.post("shed_tree", map[string]any{"zone": "storage"}, h(bad, "", "")); r.Status != 403 || r.Error != "INVALID_USER" {
			t.Fatalf("user %q: %d %s", bad, r.Status, r.raw)
		}
	}
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, h("0b5e3c1a-1111-4222-8333-444455556666", "", "")))
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, h("9user_x", "", "")))
	wantError(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "-rf"}, h("u1", "-rf", "")), "INVALID_GROUP_ID")
	// A conversation id "-rf" gets a lock under a safe name: its locked edit works.
	hc := h("u1", "", "-rf")
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "p.md", "content": "x"}, hc))
	r := e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "p.md"}, hc)
	wantOK(t, r)
	entries, err := os.ReadDir(filepath.Join(e.base, "users", "u1", "Storage", "editzone"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range entries {
		if c := d.Name()[0]; c == '-' || c == '_' {
			t.Fatalf("conversation directory %q starts with %q", d.Name(), c)
		}
	}
}

// startLogged is start with the server's JSON log (level debug) kept in a buffer.
func startLogged(t *testing.T, vars map[string]string) (*env, *testtool.Buffer) {
	t.Helper()
	cfg := config(t, vars)
	logs := &testtool.Buffer{}
	h, _, svc, err := handlers.Build(cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); svc.Close() })
	return &env{t: t, srv: srv, base: cfg.StorageBasePath, cfg: cfg}, logs
}

// TestAuthUnavailableLoggedAsWarning: why Open WebUI could not verify a session is a
// warning an operator sees at the default level, and the log never holds the token.
func TestAuthUnavailableLoggedAsWarning(t *testing.T) {
	fake := owuitest.New(t)
	const token = "tok-secret-alice-0123456789"
	fake.AddUser(token, owui.User{ID: "alice-1", Name: "Alice", Role: "user"})
	e, logs := startLogged(t, map[string]string{"FILESHED_AUTH_MODE": "session", "FILESHED_OPENWEBUI_URL": fake.URL,
		"FILESHED_OPENWEBUI_TIMEOUT_SECONDS": "1"})
	fake.SetDown(true)
	r := e.post("shed_tree", map[string]any{"zone": "storage"}, map[string]string{"Authorization": "Bearer " + token})
	wantError(t, r, "AUTH_UNAVAILABLE")
	var found bool
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "AUTH_UNAVAILABLE") && strings.Contains(line, "/api/v1/auths/") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no warning with the cause:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), token) {
		t.Fatalf("the token reached the log:\n%s", logs.String())
	}
}

// TestAuthHintsNameTheSetting: an authentication refusal says which setting to change.
func TestAuthHintsNameTheSetting(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key})
	body := map[string]any{"zone": "storage"}
	if r := e.post("shed_tree", body, nil); r.Error != "AUTH_REQUIRED" || !strings.Contains(r.Hint, "FILESHED_AUTH_API_KEY") {
		t.Fatalf("%s", r.raw)
	}
	if r := e.post("shed_tree", body, map[string]string{"Authorization": "Bearer nope"}); r.Error != "AUTH_INVALID" || !strings.Contains(r.Hint, "FILESHED_AUTH_API_KEY") {
		t.Fatalf("%s", r.raw)
	}
	s, _ := sessionEnv(t)
	if r := s.post("shed_tree", body, nil); r.Error != "AUTH_REQUIRED" || !strings.Contains(r.Hint, "Session") {
		t.Fatalf("%s", r.raw)
	}
}
