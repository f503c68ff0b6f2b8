package handlers_test

import (
	"strings"
	"testing"
	"time"
)

// The logs of a run that used tokens and keys in every way (good, wrong, Open WebUI down)
// never contain them, at debug level.
func TestLogsNeverContainSecrets(t *testing.T) {
	t.Parallel() // owns its servers and fake; no clock (issue 34)
	e, fake := sessionEnv(t)
	alice := map[string]string{"Authorization": "Bearer tok-alice", "X-OpenWebUI-Chat-Id": "chat-1"}
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, alice))
	e.post("shed_tree", map[string]any{"zone": "storage"}, map[string]string{"Authorization": "Bearer tok-wrong-secret"})
	fake.SetDown(true)
	e.post("shed_tree", map[string]any{"zone": "storage"}, map[string]string{"Authorization": "Bearer tok-while-down"})
	fake.SetDown(false)
	fake.SetDelay(3 * time.Second)
	e.post("shed_tree", map[string]any{"zone": "storage"}, map[string]string{"Authorization": "Bearer tok-while-slow"})

	const secret = "jwt-secret-never-logged"
	j := start(t, map[string]string{"FILESHED_AUTH_MODE": "jwt", "FILESHED_AUTH_API_KEY": key, "FILESHED_AUTH_JWT_SECRET": secret,
		"FILESHED_METRICS_TOKEN": "metrics-token-never-logged"})
	good := signJWT(t, "HS256", secret, map[string]any{"sub": "carol-3", "iss": "open-webui", "exp": time.Now().Add(time.Hour).Unix()})
	wantOK(t, j.post("shed_tree", map[string]any{"zone": "storage"}, map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Jwt": good}))
	j.post("shed_tree", map[string]any{"zone": "storage"}, map[string]string{"Authorization": "Bearer not-the-key", "X-OpenWebUI-User-Jwt": good})
	bad := signJWT(t, "HS256", "wrong", map[string]any{"sub": "carol-3"})
	j.post("shed_tree", map[string]any{"zone": "storage"}, map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Jwt": bad})

	logs := e.logs.String() + j.logs.String()
	if !strings.Contains(logs, `"level":"DEBUG"`) && !strings.Contains(logs, `"level":"INFO"`) {
		t.Fatalf("no logs captured: %q", logs)
	}
	for _, s := range []string{"tok-alice", "tok-wrong-secret", "tok-while-down", "tok-while-slow", secret, key, "not-the-key",
		"metrics-token-never-logged", good, bad, strings.Split(good, ".")[2]} {
		if strings.Contains(logs, s) {
			t.Errorf("the logs contain the secret %q", s)
		}
	}
}
