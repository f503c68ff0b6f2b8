package handlers_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
	"github.com/fileshed/fileshed/internal/testtool"
)

// copyFile copies the file from to the new file to and returns its bytes.
func copyFile(t testing.TB, from, to string) []byte {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMCPWithTheTypeScriptSDKClient: an MCP client nobody on the team wrote, the official
// TypeScript SDK (@modelcontextprotocol/sdk from npm, pinned in testdata/mcp-smoke), lists
// and calls the tools of a fresh server with mcp.enabled, as a desktop client does: auth
// session with the user's Open WebUI token. It needs node and npm (CI has both) and
// installs the SDK with npm ci, once per lock file, into the tests' cache.
func TestMCPWithTheTypeScriptSDKClient(t *testing.T) {
	t.Parallel()
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		t.Skip("node and npm are needed to install @modelcontextprotocol/sdk, the TypeScript MCP client")
	}
	src := filepath.Join("testdata", "mcp-smoke")
	dir := t.TempDir()
	run := func(dir string, timeout time.Duration, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The SDK is installed by npm ci once per lock file and node version, into the tests'
	// cache (testtool.Cached, TESTING.md): npm's work was most of this test's time.
	var key []byte
	for _, f := range []string{"package.json", "package-lock.json"} {
		key = append(append(key, copyFile(t, filepath.Join(src, f), filepath.Join(dir, f))...), 0)
	}
	key = append(key, run(dir, time.Minute, node, "--version")...)
	modules := testtool.Cached(t, "mcpsmoke", key, func(into string) error {
		for _, f := range []string{"package.json", "package-lock.json"} {
			copyFile(t, filepath.Join(src, f), filepath.Join(into, f))
		}
		run(into, 5*time.Minute, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		return nil
	})
	copyFile(t, filepath.Join(src, "smoke.mjs"), filepath.Join(dir, "smoke.mjs"))
	if err := os.Symlink(filepath.Join(modules, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}

	fake := owuitest.New(t)
	fake.AddUser("tok-dana", owui.User{ID: "dana-4", Email: "d@x", Name: "Dana", Role: "user"})
	e := start(t, with(mcpOn, map[string]string{"FILESHED_AUTH_MODE": "session", "FILESHED_OPENWEBUI_URL": fake.URL}))
	out := run(dir, time.Minute, node, "smoke.mjs", e.srv.URL+"/mcp", "tok-dana")
	var got struct {
		OK    bool `json:"ok"`
		Tools int  `json:"tools"`
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil || !got.OK || got.Tools == 0 {
		t.Fatalf("smoke.mjs: %s", out)
	}
	if c := readFile(t, e, "users/dana-4/Storage/data/smoke/hello.txt"); c != "hello from TypeScript" {
		t.Fatalf("the TypeScript client's file: %q", c)
	}
}
