package handlers_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

const key = "test-bearer-key-123"

func TestHeadersMode(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key})
	body := map[string]any{"zone": "storage"}
	user := "0b5e3c1a-1111-4222-8333-444455556666"
	cases := []struct {
		name    string
		headers map[string]string
		status  int
		code    string
	}{
		{"no key", map[string]string{"X-OpenWebUI-User-Id": user}, 401, "AUTH_REQUIRED"},
		{"wrong key", map[string]string{"Authorization": "Bearer nope", "X-OpenWebUI-User-Id": user}, 401, "AUTH_INVALID"},
		{"key prefix", map[string]string{"Authorization": "Bearer " + key[:5], "X-OpenWebUI-User-Id": user}, 401, "AUTH_INVALID"},
		{"basic scheme", map[string]string{"Authorization": "Basic " + key, "X-OpenWebUI-User-Id": user}, 401, "AUTH_REQUIRED"},
		{"no user", map[string]string{"Authorization": "Bearer " + key}, 401, "AUTH_REQUIRED"},
		{"user dotdot", map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": ".."}, 403, "INVALID_USER"},
		{"user dot", map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "."}, 403, "INVALID_USER"},
		{"user slash", map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "a/b"}, 403, "INVALID_USER"},
		{"user 300 chars", map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": strings.Repeat("a", 300)}, 403, "INVALID_USER"},
		{"user look-alike", map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "аdmin"}, 403, "INVALID_USER"},
		{"ok", map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": user}, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post("shed_tree", body, tc.headers)
			if r.Status != tc.status || r.Error != tc.code {
				t.Fatalf("want %d %s, got %d: %s", tc.status, tc.code, r.Status, r.raw)
			}
		})
	}
}

func TestHeadersModeGroups(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key})
	h := map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "u1", "X-Shed-Groups": "team-a, team-b"}
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "team-b"}, h))
	wantError(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "team-c"}, h), "GROUP_ACCESS_DENIED")
	wantError(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "Team-A"}, h), "GROUP_NOT_FOUND")
	wantError(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "a b"}, h), "GROUP_NOT_FOUND")
}

func TestStaticGroups(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_GROUPS_STATIC": `{"ok":["local"],"other":["someone"]}`})
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "ok"}, nil))
	wantError(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "other"}, nil), "GROUP_ACCESS_DENIED")
}

func sessionEnv(t *testing.T) (*env, *owuitest.Server) {
	fake := owuitest.New(t)
	fake.AddUser("tok-alice", owui.User{ID: "alice-1", Email: "a@x", Name: "Alice", Role: "user"})
	fake.AddUser("tok-bob", owui.User{ID: "bob-2", Email: "b@x", Name: "Bob", Role: "user"})
	fake.AddGroup(owui.Group{ID: "g-eng", Name: "Engineering", UserIDs: []string{"alice-1"}})
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "session", "FILESHED_OPENWEBUI_URL": fake.URL,
		"FILESHED_OPENWEBUI_TIMEOUT_SECONDS": "1"})
	return e, fake
}

func TestSessionMode(t *testing.T) {
	t.Parallel()
	e, fake := sessionEnv(t)
	body := map[string]any{"zone": "storage"}
	wantCode := func(r reply, status int, code string) {
		t.Helper()
		if r.Status != status || r.Error != code {
			t.Fatalf("want %d %s, got %d: %s", status, code, r.Status, r.raw)
		}
	}
	wantCode(e.post("shed_tree", body, nil), 401, "AUTH_REQUIRED")
	wantCode(e.post("shed_tree", body, map[string]string{"Authorization": "Bearer wrong"}), 401, "AUTH_INVALID")
	alice := map[string]string{"Authorization": "Bearer tok-alice", "X-OpenWebUI-Chat-Id": "chat-1"}
	before := fake.Calls("/api/v1/auths/")
	for range 10 {
		wantOK(t, e.post("shed_tree", body, alice))
	}
	if n := fake.Calls("/api/v1/auths/") - before; n != 1 {
		t.Fatalf("token not cached: %d upstream calls for 10 requests", n)
	}
	// Groups come from Open WebUI with the user's own token, by id or exact name.
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "Engineering"}, alice))
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "g-eng"}, alice))
	wantError(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "engineering"}, alice), "GROUP_NOT_FOUND")
	bob := map[string]string{"Authorization": "Bearer tok-bob"}
	wantError(t, e.post("shed_tree", map[string]any{"zone": "group", "group": "g-eng"}, bob), "GROUP_ACCESS_DENIED")
	// A user never sees another user's zone: bob's storage is his own.
	e.write("users/alice-1/Storage/data/alice.txt", "x")
	r := e.post("shed_tree", body, bob)
	wantOK(t, r)
	if strings.Contains(r.raw, "alice.txt") {
		t.Fatalf("bob sees alice's files: %s", r.raw)
	}
}

func TestSessionModeOpenWebUIDown(t *testing.T) {
	t.Parallel() // owns its server and fake; the bound is 2 s over the timeout (issue 34)
	e, fake := sessionEnv(t)
	fake.SetDown(true)
	r := e.post("shed_tree", map[string]any{"zone": "storage"}, map[string]string{"Authorization": "Bearer tok-alice"})
	if r.Status != http.StatusServiceUnavailable || r.Error != "AUTH_UNAVAILABLE" {
		t.Fatalf("got %d %s", r.Status, r.raw)
	}
	fake.SetDown(false)
	fake.SetDelay(5 * time.Second)
	start := time.Now()
	r = e.post("shed_tree", map[string]any{"zone": "storage"}, map[string]string{"Authorization": "Bearer tok-bob"})
	if r.Error != "AUTH_UNAVAILABLE" {
		t.Fatalf("hanging Open WebUI: %s", r.raw)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("not bounded by openwebui.timeout_seconds=1: took %v", d)
	}
}

func signJWT(t *testing.T, alg string, secret string, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	head := enc(map[string]string{"alg": alg, "typ": "JWT"})
	payload := enc(claims)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(head + "." + payload))
	return head + "." + payload + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func TestJWTMode(t *testing.T) {
	const secret = "jwt-secret-abc-0123"
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "jwt", "FILESHED_AUTH_API_KEY": key, "FILESHED_AUTH_JWT_SECRET": secret})
	future := time.Now().Add(time.Hour).Unix()
	claims := func(sub string) map[string]any {
		return map[string]any{"sub": sub, "name": "Carol", "iss": "open-webui", "exp": future}
	}
	good := signJWT(t, "HS256", secret, claims("carol-3"))
	parts := strings.Split(good, ".")
	noneAlg := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + parts[1] + "."
	cases := []struct {
		name, jwt string
		status    int
		code      string
	}{
		{"valid", good, 200, ""},
		{"wrong secret", signJWT(t, "HS256", "other", claims("carol-3")), 401, "AUTH_INVALID"},
		{"alg none", noneAlg, 401, "AUTH_INVALID"},
		{"alg HS512", signJWT(t, "HS512", secret, claims("carol-3")), 401, "AUTH_INVALID"},
		{"expired", signJWT(t, "HS256", secret, map[string]any{"sub": "carol-3", "exp": 1}), 401, "AUTH_INVALID"},
		{"tampered claims", parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"admin"}`)) + "." + parts[2], 401, "AUTH_INVALID"},
		{"garbage", "a.b", 401, "AUTH_INVALID"},
		{"missing", "", 401, "AUTH_REQUIRED"},
		{"traversal id", signJWT(t, "HS256", secret, claims("../x")), 403, "INVALID_USER"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Authorization": "Bearer " + key}
			if tc.jwt != "" {
				h["X-OpenWebUI-User-Jwt"] = tc.jwt
			}
			r := e.post("shed_tree", map[string]any{"zone": "storage"}, h)
			if r.Status != tc.status || r.Error != tc.code {
				t.Fatalf("want %d %s, got %d: %s", tc.status, tc.code, r.Status, r.raw)
			}
		})
	}
	r := e.post("shed_tree", map[string]any{"zone": "storage"}, map[string]string{"X-OpenWebUI-User-Jwt": good})
	if r.Status != 401 {
		t.Fatalf("jwt without the bearer key must be refused: %s", r.raw)
	}
}

// TestStatsShowsGroupQuotas: shed_stats has a used/limit line per group of the caller.
func TestStatsShowsGroupQuotas(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key, "FILESHED_QUOTA_PER_GROUP_MB": "3"})
	h := map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "u1", "X-Shed-Groups": "team-a,team-b"}
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "group", "group": "team-a", "path": "x.txt", "content": strings.Repeat("x", 1000)}, h))
	r := e.post("shed_stats", nil, h)
	wantOK(t, r)
	groups, _ := r.Data["groups"].([]any)
	if len(groups) != 2 {
		t.Fatalf("groups: %s", r.raw)
	}
	for _, g := range groups {
		line := g.(map[string]any)
		want, history := 0.0, line["history_bytes"].(float64)
		if line["id"] == "team-a" {
			want = 1000 + history // the file and its first version's history
			if history <= 0 {
				t.Fatalf("no history in %v", line)
			}
		}
		if line["used_bytes"] != want || line["limit_bytes"] != float64(3<<20) {
			t.Fatalf("group line %v in %s", line, r.raw)
		}
	}
}
