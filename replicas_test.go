package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
)

// The deployment files for several replicas (README "Several replicas"): the compose variant
// and the Kubernetes manifests. Their tests read them as the tools would and check the facts
// a deployment depends on against the server's own configuration and the image recipe.

// imageName is the image every deployment file runs (compose builds it under this name; the
// Kubernetes manifests name it and kustomization.yaml's images entry points it at a registry).
const imageName = "fileshed"

// readinessDBTimeout is how long /readyz waits for the state database (core.Readiness): a
// readiness probe must wait longer, or a slow answer reads as a failure.
const readinessDBTimeout = 2

// imageEnv is the environment the Dockerfile's ENV gives every container of the image.
func imageEnv(t *testing.T) map[string]string {
	m := regexp.MustCompile(`(?m)^ENV ((?:.*\\\n)*.*)$`).FindSubmatch(must(os.ReadFile("Dockerfile")))
	if m == nil {
		t.Fatal("Dockerfile has no ENV")
	}
	env := map[string]string{}
	for _, f := range strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " ")) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("Dockerfile ENV %q is not NAME=value", f)
		}
		env[k] = v
	}
	return env
}

// imageUID is the uid of the image's user (useradd --uid).
func imageUID(t *testing.T) int {
	m := regexp.MustCompile(`--uid (\d+)`).FindSubmatch(must(os.ReadFile("Dockerfile")))
	if m == nil {
		t.Fatal("Dockerfile creates no user with --uid")
	}
	uid, _ := strconv.Atoi(string(m[1]))
	return uid
}

// imagePort is the port the image listens on (its FILESHED_LISTEN).
func imagePort(t *testing.T) int {
	_, p, err := net.SplitHostPort(imageEnv(t)["FILESHED_LISTEN"])
	port, _ := strconv.Atoi(p)
	if err != nil || port == 0 {
		t.Fatalf("Dockerfile FILESHED_LISTEN %q", imageEnv(t)["FILESHED_LISTEN"])
	}
	return port
}

// secretSample is what a test puts in the file of a FILESHED_*_FILE variable: a value of the
// secret's shape (the real file is mounted in the container).
func secretSample(name string) string {
	if name == "FILESHED_STATE_URL_FILE" {
		return "postgres://fileshed:sample@postgres:5432/fileshed?sslmode=disable"
	}
	return "sample-secret-of-" + name // random enough for the valves' check (not one letter repeated)
}

// containerValves loads the configuration a container of the image gets from env over the
// image's ENV, as the server does at start, and fails the test on what the server would
// refuse (an invalid value) or warn about (a FILESHED_* variable that names no setting,
// public_url not set), and on a secret given as a value instead of a file.
func containerValves(t *testing.T, where string, env map[string]string) *valves.Config {
	t.Helper()
	all := imageEnv(t)
	maps.Copy(all, env)
	dir := t.TempDir()
	var environ []string
	for k, v := range all {
		environ = append(environ, k+"="+v)
		if strings.HasPrefix(k, "FILESHED_") && strings.HasSuffix(k, "_FILE") {
			all[k] = filepath.Join(dir, k)
			if err := os.WriteFile(all[k], []byte(secretSample(k)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg, src, err := valves.Load(defaultValves, nil, func(k string) (string, bool) { v, ok := all[k]; return v, ok })
	if err != nil {
		t.Fatalf("%s: the server would refuse to start: %v", where, err)
	}
	if err := handlers.Check(cfg); err != nil {
		t.Fatalf("%s: the server would refuse to start: %v", where, err)
	}
	for _, w := range cfg.Warnings(environ) {
		t.Errorf("%s: the server would warn: %s", where, w)
	}
	var report bytes.Buffer
	if err := cfg.Report(&report, src); err != nil {
		t.Fatal(err)
	}
	for k := range env {
		if !strings.HasSuffix(k, "_FILE") && strings.Contains(report.String(), " "+k+"[_FILE] ") {
			t.Errorf("%s: %s is a secret: mount it as a file and set %s_FILE", where, k, k)
		}
	}
	return cfg
}

// secretsUnder checks that every FILESHED_*_FILE variable of env names a file under one of
// dirs (where the secrets are mounted).
func secretsUnder(t *testing.T, where string, env map[string]string, dirs ...string) {
	t.Helper()
	for k, v := range env {
		if strings.HasPrefix(k, "FILESHED_") && strings.HasSuffix(k, "_FILE") &&
			!slices.ContainsFunc(dirs, func(d string) bool { return filepath.Dir(v) == d }) {
			t.Errorf("%s: %s=%s is not a mounted secret (%v)", where, k, v, dirs)
		}
	}
}

// dependsOn is a compose service's depends_on in either form: a list of services (each
// condition service_started) or a map of service to condition.
type dependsOn map[string]string

func (d *dependsOn) UnmarshalYAML(n *yaml.Node) error {
	*d = dependsOn{}
	var list []string
	if n.Kind == yaml.SequenceNode {
		if err := n.Decode(&list); err != nil {
			return err
		}
		for _, s := range list {
			(*d)[s] = "service_started"
		}
		return nil
	}
	var m map[string]struct {
		Condition string `yaml:"condition"`
	}
	if err := n.Decode(&m); err != nil {
		return err
	}
	for s, c := range m {
		(*d)[s] = c.Condition
	}
	return nil
}

// composeService is what the tests read of a compose service.
type composeService struct {
	Image string `yaml:"image"`
	Build struct {
		Context string `yaml:"context"`
	} `yaml:"build"`
	Command         []string          `yaml:"command"`
	Environment     map[string]string `yaml:"environment"`
	Secrets         []string          `yaml:"secrets"`
	Volumes         []string          `yaml:"volumes"`
	Tmpfs           []string          `yaml:"tmpfs"`
	ReadOnly        bool              `yaml:"read_only"`
	Ports           []string          `yaml:"ports"`
	StopGracePeriod string            `yaml:"stop_grace_period"`
	Restart         string            `yaml:"restart"`
	DependsOn       dependsOn         `yaml:"depends_on"`
	Healthcheck     *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	Deploy struct {
		Replicas int `yaml:"replicas"`
	} `yaml:"deploy"`
}

// checkToolServer checks Open WebUI's environment: user and chat headers forwarded, and one
// pre-registered tool server at url, with session auth.
func checkToolServer(t *testing.T, env map[string]string, url string) {
	t.Helper()
	var conns []struct {
		URL      string `json:"url"`
		Path     string `json:"path"`
		AuthType string `json:"auth_type"`
		Config   struct {
			Enable bool `json:"enable"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(env["TOOL_SERVER_CONNECTIONS"]), &conns); err != nil || len(conns) != 1 {
		t.Fatalf("TOOL_SERVER_CONNECTIONS: %v %v", err, conns)
	}
	c := conns[0]
	if c.URL != url || c.Path != "openapi.json" || c.AuthType != "session" || !c.Config.Enable {
		t.Fatalf("connection %+v, want %s", c, url)
	}
	if env["ENABLE_FORWARD_USER_INFO_HEADERS"] != "true" {
		t.Fatal("Open WebUI must forward the chat id header")
	}
}

// TestComposeReplicas: deploy/compose.replicas.yaml runs PostgreSQL, the migration once
// before the servers, two replicas of the image on one volume whose configuration the server
// accepts without a warning (state in PostgreSQL, secrets from files), a load balancer that
// reaches them under the name Open WebUI is given, with timeouts and body limits that let
// the longest command answer.
func TestComposeReplicas(t *testing.T) {
	var doc struct {
		Services map[string]composeService `yaml:"services"`
		Volumes  map[string]any            `yaml:"volumes"`
		Secrets  map[string]struct {
			File string `yaml:"file"`
		} `yaml:"secrets"`
	}
	if err := yaml.Unmarshal(must(os.ReadFile("deploy/compose.replicas.yaml")), &doc); err != nil {
		t.Fatal(err)
	}
	db, migrate, server, lb, owui := doc.Services["postgres"], doc.Services["fileshed-migrate"],
		doc.Services["fileshed-server"], doc.Services["fileshed"], doc.Services["openwebui"]
	for _, s := range []composeService{migrate, server} {
		if s.Image != imageName || s.Build.Context != ".." {
			t.Errorf("a fileshed service runs image %q built from %q, want %s from the repository", s.Image, s.Build.Context, imageName)
		}
		if !s.ReadOnly || !slices.Contains(s.Tmpfs, "/tmp") {
			t.Errorf("a fileshed service's root is writable or it has no /tmp tmpfs")
		}
	}
	if _, err := os.Stat(filepath.Join("deploy", migrate.Build.Context, "Dockerfile")); err != nil {
		t.Error(err)
	}

	// PostgreSQL: its password from a secret file, healthy before anything uses it.
	if db.Environment["POSTGRES_PASSWORD_FILE"] == "" || db.Healthcheck == nil || !slices.Contains(db.Healthcheck.Test, "pg_isready") {
		t.Errorf("postgres: password from a file and a pg_isready healthcheck, got %+v", db)
	}
	// The migration: once, after PostgreSQL is healthy; the servers start after it succeeded.
	if !slices.Equal(migrate.Command, []string{"admin", "migrate"}) || migrate.Restart != "no" ||
		migrate.DependsOn["postgres"] != "service_healthy" {
		t.Errorf("fileshed-migrate: command %v restart %q depends_on %v", migrate.Command, migrate.Restart, migrate.DependsOn)
	}
	if server.DependsOn["fileshed-migrate"] != "service_completed_successfully" || server.DependsOn["postgres"] != "service_healthy" {
		t.Errorf("fileshed-server depends_on %v: the migration must complete first", server.DependsOn)
	}

	// The servers: several replicas of one service, one named volume, state in PostgreSQL.
	if server.Deploy.Replicas < 2 {
		t.Errorf("fileshed-server: %d replicas", server.Deploy.Replicas)
	}
	if len(server.Ports) > 0 {
		t.Error("fileshed-server publishes a port: two replicas cannot publish one host port")
	}
	for name, s := range map[string]composeService{"fileshed-migrate": migrate, "fileshed-server": server} {
		cfg := containerValves(t, name, s.Environment)
		if s.Environment["FILESHED_STATE_DRIVER"] != "postgres" {
			t.Errorf("%s: state.driver %q, want postgres", name, s.Environment["FILESHED_STATE_DRIVER"])
		}
		var mounted []string
		for _, sec := range s.Secrets {
			if _, ok := doc.Secrets[sec]; !ok {
				t.Errorf("%s: secret %s is not declared", name, sec)
			}
			mounted = append(mounted, "/run/secrets/"+sec)
		}
		for k, v := range s.Environment {
			if strings.HasSuffix(k, "_FILE") && !slices.Contains(mounted, v) {
				t.Errorf("%s: %s=%s is not one of its secrets %v", name, k, v, mounted)
			}
		}
		// Working copies per replica (a tmpfs), never on the shared volume.
		if !slices.Contains(s.Tmpfs, cfg.Encryption.WorkDir) {
			t.Errorf("%s: encryption.work_dir %q is not on the container's own tmpfs %v", name, cfg.Encryption.WorkDir, s.Tmpfs)
		}
		if name == "fileshed-server" {
			vol, at, _ := strings.Cut(server.Volumes[0], ":")
			if _, ok := doc.Volumes[vol]; !ok || len(server.Volumes) != 1 || at != cfg.StorageBasePath {
				t.Errorf("fileshed-server volumes %v: want one named volume at %s", server.Volumes, cfg.StorageBasePath)
			}
			stop, err := time.ParseDuration(server.StopGracePeriod)
			if need := time.Duration(cfg.ShutdownGraceSeconds+5) * time.Second; err != nil || stop <= need {
				t.Errorf("stop_grace_period %q must exceed shutdown_grace_seconds + 5 s (%s)", server.StopGracePeriod, need)
			}
			checkBalancer(t, cfg, server, lb)
		}
	}
	for name, s := range doc.Secrets {
		if !strings.HasPrefix(s.File, "./secrets/") {
			t.Errorf("secret %s: %s is outside deploy/secrets (ignored by git and the build)", name, s.File)
		}
	}
	for file, want := range map[string]string{".gitignore": "/deploy/secrets/", ".dockerignore": "deploy/secrets"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `$`).Match(must(os.ReadFile(file))) {
			t.Errorf("%s lacks %s", file, want)
		}
	}

	checkReadmeRefs(t, "deploy/compose.replicas.yaml")
	// Open WebUI knows the load balancer, under the name compose.yaml gives the single server.
	checkToolServer(t, owui.Environment, "http://fileshed:"+strconv.Itoa(imagePort(t)))
}

// checkBalancer checks the nginx load balancer of the compose variant: it listens where Open
// WebUI and public_url point, reaches every replica of server, lets the longest command
// answer, leaves request bodies to fileshed's own limit, and publishes /metrics only on this
// machine unless a scrape token is set.
func checkBalancer(t *testing.T, cfg *valves.Config, server, lb composeService) {
	t.Helper()
	var conf []byte
	for _, v := range lb.Volumes {
		if src, dst, _ := strings.Cut(strings.TrimSuffix(v, ":ro"), ":"); dst == "/etc/nginx/conf.d/default.conf" {
			conf = must(os.ReadFile(filepath.Join("deploy", src)))
		}
	}
	if conf == nil || !strings.HasPrefix(lb.Image, "nginx:") {
		t.Fatalf("the load balancer fileshed is not nginx with its configuration mounted: %+v", lb)
	}
	directive := func(name string) string {
		m := regexp.MustCompile(`(?m)^\s*` + name + ` ([^;]+);`).FindSubmatch(conf)
		if m == nil {
			t.Errorf("nginx.replicas.conf lacks %s", name)
			return ""
		}
		return string(m[1])
	}
	port := strconv.Itoa(imagePort(t))
	if up := strings.Fields(directive("server")); len(up) < 2 || up[0] != "fileshed-server:"+port || up[1] != "resolve" {
		t.Errorf("upstream server %v: want fileshed-server:%s resolve (every replica, followed as they restart)", up, port)
	}
	if directive("listen") != port {
		t.Errorf("nginx listens on %s, want %s", directive("listen"), port)
	}
	read, err := time.ParseDuration(directive("proxy_read_timeout"))
	if need := time.Duration(cfg.ExecTimeoutMax+60) * time.Second; err != nil || read < need {
		t.Errorf("proxy_read_timeout %s: the server answers within exec_timeout_max + 1 min (%s)", read, need)
	}
	if directive("client_max_body_size") != "0" {
		t.Error("client_max_body_size must be 0: fileshed bounds bodies itself (max_body_mb)")
	}
	u, err := url.Parse(cfg.PublicURL())
	published := false
	for _, p := range lb.Ports {
		parts := strings.Split(p, ":")
		if len(parts) == 3 && parts[2] == port && parts[1] == u.Port() && err == nil {
			published = true
		}
		token := server.Environment["FILESHED_METRICS_TOKEN"] != "" || server.Environment["FILESHED_METRICS_TOKEN_FILE"] != ""
		if (len(parts) != 3 || parts[0] != "127.0.0.1") && !token {
			t.Errorf("port %q publishes /metrics on every interface without metrics.token", p)
		}
	}
	if !published {
		t.Errorf("public_url %s is not the load balancer's published port %v", cfg.PublicURL(), lb.Ports)
	}
}
