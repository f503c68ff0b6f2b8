package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
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
			Ports           []string          `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	owui, shed := doc.Services["openwebui"], doc.Services["fileshed"]
	checkToolServer(t, owui.Environment, "http://fileshed:8000")
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
	// /metrics shares the port: published beyond this machine, it needs metrics.token.
	token := shed.Environment["FILESHED_METRICS_TOKEN"] != "" || shed.Environment["FILESHED_METRICS_TOKEN_FILE"] != ""
	for _, p := range shed.Ports {
		if parts := strings.Split(p, ":"); len(parts) != 3 || parts[0] != "127.0.0.1" {
			if !token {
				t.Errorf("port %q publishes /metrics on every interface without metrics.token", p)
			}
		}
	}
	if len(shed.Ports) == 0 {
		t.Error("fileshed publishes no port: download links need one")
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
	for _, want := range []string{"deploy/image-tools.sh", "fileshed-sandbox", "/usr/bin/tini", "USER fileshed", "VOLUME /data",
		// readiness, not liveness: a server whose commands are all refused is not healthy
		`CMD ["fileshed", "healthcheck", "--ready"]`,
		// an image build has no .git: the commit comes as a build argument
		"ARG COMMIT", "-X main.commit=${COMMIT}"} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if !declaresString("main.go", "commit") {
		t.Error("main.go declares no package-level string commit for -X main.commit")
	}
	module := regexp.MustCompile(`(?m)^module (\S+)$`).FindSubmatch(must(os.ReadFile("go.mod")))
	for label, want := range map[string]string{
		"title": "fileshed", "version": handlers.Version, "revision": "${COMMIT}", "source": "https://" + string(module[1]),
	} {
		if !strings.Contains(df, "org.opencontainers.image."+label+`="`+want+`"`) {
			t.Errorf("Dockerfile lacks the OCI label %s=%q", label, want)
		}
	}
	if !strings.Contains(df, "org.opencontainers.image.description=") {
		t.Error("Dockerfile lacks the OCI label description")
	}
	// The host smoke test builds the binaries with the image's flags.
	smoke := string(must(os.ReadFile("deploy/smoke.sh")))
	for _, flags := range regexp.MustCompile(`go build -trimpath -ldflags="[^"]*"`).FindAllString(df, -1) {
		if !strings.Contains(smoke, flags) {
			t.Errorf("deploy/smoke.sh does not build with the image's %s", flags)
		}
	}
	checkReadmeRefs(t, "Dockerfile")
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

// checkReadmeRefs: the comments of file that point at the README (README "Section") name
// sections that exist.
func checkReadmeRefs(t *testing.T, file string) {
	t.Helper()
	readme := must(os.ReadFile("README.md"))
	for _, ref := range regexp.MustCompile(`README "([^"]+)"`).FindAllSubmatch(must(os.ReadFile(file)), -1) {
		if !regexp.MustCompile(`(?m)^#+ ` + regexp.QuoteMeta(string(ref[1])) + `$`).Match(readme) {
			t.Errorf("%s names the README section %q, which does not exist", file, ref[1])
		}
	}
}

// declaresString reports whether the Go file declares a package-level string variable name.
func declaresString(file, name string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		return false
	}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "string" && slices.ContainsFunc(vs.Names, func(n *ast.Ident) bool { return n.Name == name }) {
					return true
				}
			}
		}
	}
	return false
}

// must is the content of a file the test cannot go on without.
func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestReleaseRecipe (issue 33 item 6): deploy/release.sh builds what a release publishes
// with the image's flags, reads the version the server announces, and publishes both
// architectures, their SBOM and checksums. (Building takes minutes: the script itself is run
// by hand for a release, as its header says.)
func TestReleaseRecipe(t *testing.T) {
	script := string(must(os.ReadFile("deploy/release.sh")))
	df := string(must(os.ReadFile("Dockerfile")))
	for _, flags := range regexp.MustCompile(`-ldflags="-s -w[^"]*"`).FindAllString(df, -1) {
		if !strings.Contains(script, flags) {
			t.Errorf("deploy/release.sh does not build with the image's %s", flags)
		}
	}
	if !strings.Contains(script, `s/^const Version = "\(.*\)"$/\1/p' handlers/handlers.go`) {
		t.Error("deploy/release.sh does not read handlers.Version from handlers/handlers.go")
	}
	if !regexp.MustCompile(`(?m)^const Version = "` + regexp.QuoteMeta(handlers.Version) + `"$`).Match(must(os.ReadFile("handlers/handlers.go"))) {
		t.Error("handlers/handlers.go's Version line is not the form release.sh reads")
	}
	for _, want := range []string{"for arch in amd64 arm64", "CGO_ENABLED=0", "go version -m", "SHA256SUMS", "./cmd/fileshed-sandbox"} {
		if !strings.Contains(script, want) {
			t.Errorf("deploy/release.sh lacks %q", want)
		}
	}
	checkReadmeRefs(t, "deploy/release.sh")
}
