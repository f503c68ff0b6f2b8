package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fileshed/fileshed/core/valves"
)

// TestComposeFileAgrees: compose.yaml's two sides point at each other, the pre-registered
// tool server connection is valid JSON with session auth, and the stop grace covers the
// server's own shutdown grace.
func TestComposeFileAgrees(t *testing.T) {
	raw, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Environment     map[string]string `yaml:"environment"`
			StopGracePeriod string            `yaml:"stop_grace_period"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	owui, shed := doc.Services["openwebui"], doc.Services["fileshed"]
	var conns []struct {
		URL      string `json:"url"`
		Path     string `json:"path"`
		AuthType string `json:"auth_type"`
		Config   struct {
			Enable bool `json:"enable"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(owui.Environment["TOOL_SERVER_CONNECTIONS"]), &conns); err != nil || len(conns) != 1 {
		t.Fatalf("TOOL_SERVER_CONNECTIONS: %v %v", err, conns)
	}
	c := conns[0]
	if c.URL != "http://fileshed:8000" || c.Path != "openapi.json" || c.AuthType != "session" || !c.Config.Enable {
		t.Fatalf("connection %+v", c)
	}
	if owui.Environment["ENABLE_FORWARD_USER_INFO_HEADERS"] != "true" {
		t.Fatal("Open WebUI must forward the chat id header")
	}
	if shed.Environment["FILESHED_AUTH_MODE"] != "session" || shed.Environment["FILESHED_OPENWEBUI_URL"] != "http://openwebui:8080" {
		t.Fatalf("fileshed environment %v", shed.Environment)
	}
	cfg, _, err := valves.Load(defaultValves, nil, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	stop, err := time.ParseDuration(shed.StopGracePeriod)
	if need := time.Duration(cfg.ShutdownGraceSeconds+5) * time.Second; err != nil || stop <= need {
		t.Fatalf("stop_grace_period %q must exceed shutdown_grace_seconds + 5 s (%s)", shed.StopGracePeriod, need)
	}
}

// TestDockerfileRecipe: bases pinned by digest, the packages come from the one list CI
// installs, the launcher ships beside the server, tini is PID 1, and the build context
// leaves out history and data.
func TestDockerfileRecipe(t *testing.T) {
	raw, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(raw)
	from := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(df, -1)
	if len(from) != 2 {
		t.Fatalf("want a build and a runtime stage, got %v", from)
	}
	for _, f := range from {
		if !regexp.MustCompile(`@sha256:[0-9a-f]{64}$`).MatchString(f[1]) {
			t.Errorf("base image %s is not pinned by digest", f[1])
		}
	}
	for _, want := range []string{"deploy/image-tools.sh", "fileshed-sandbox", "/usr/bin/tini", "USER fileshed", "HEALTHCHECK", "VOLUME /data"} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	ignore, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".git", "data"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `$`).Match(ignore) {
			t.Errorf(".dockerignore lacks %s", want)
		}
	}
	tools, err := os.ReadFile("deploy/image-tools.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"tini", "git", "gawk", "zip", "unzip", "jq", "sqlite3", "file", "curl"} {
		if !regexp.MustCompile(`\b` + pkg + `\b`).Match(tools) {
			t.Errorf("deploy/image-tools.sh lacks %s", pkg)
		}
	}
}
