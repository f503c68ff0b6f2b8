package admin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fileshed/fileshed/admin"
	"github.com/fileshed/fileshed/core/sandbox"
	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
	"github.com/fileshed/fileshed/internal/pgtest"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.LauncherArg { // commands re-execute the test binary
		os.Exit(sandbox.LauncherMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == crashArg { // an import that kills itself midway
		os.Exit(crashingImport(os.Args[2:]))
	}
	os.Exit(pgtest.Run(m)) // the tests, then the private PostgreSQL they started is stopped
}

// config loads the embedded defaults for a storage directory, with flags.
func config(t testing.TB, base string, flags ...string) *valves.Config {
	t.Helper()
	defaults, err := os.ReadFile("../valves.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := valves.Load(defaults, append([]string{"--storage-base-path", base}, flags...), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// live is a running server on a storage directory.
type live struct {
	srv   *httptest.Server
	close func()
}

func serve(t *testing.T, base string) *live {
	t.Helper()
	return serveWith(t, config(t, base))
}

// serveWith is serve with a configuration.
func serveWith(t *testing.T, cfg *valves.Config) *live {
	t.Helper()
	h, _, svc, err := handlers.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	l := &live{srv: srv}
	var once sync.Once
	l.close = func() { once.Do(func() { srv.Close(); svc.Close() }) }
	t.Cleanup(l.close)
	return l
}

func (l *live) call(t *testing.T, tool string, body map[string]any, conv string) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, l.srv.URL+"/"+tool, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if conv != "" {
		req.Header.Set("X-OpenWebUI-Chat-Id", conv)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (l *live) ok(t *testing.T, tool string, body map[string]any) {
	t.Helper()
	if r := l.call(t, tool, body, ""); r["success"] != true {
		t.Fatalf("%s: %v", tool, r)
	}
}

// run runs `fileshed admin args...` on base and returns the exit code and output.
func run(t *testing.T, base string, args ...string) (int, string, string) {
	t.Helper()
	return runWith(t, config(t, base), args...)
}

// runWith is run with a configuration.
func runWith(t *testing.T, cfg *valves.Config, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := admin.Run(cfg, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestAdminQuotaLocksAuditLs(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	l := serve(t, base)
	l.ok(t, "shed_create_file", map[string]any{"zone": "documents", "path": "plan.md", "content": "v1\n"})
	l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": "notes/a.txt", "content": "hello"})

	code, out, _ := run(t, base, "quota", "show")
	if code != 0 || !strings.Contains(out, "user") || !strings.Contains(out, "local") {
		t.Fatalf("quota show: %d %q", code, out)
	}
	// Reconcile races a live server's writes: refused while it runs.
	if code, _, errOut := run(t, base, "quota", "reconcile"); code != 1 || !strings.Contains(errOut, "server is running") {
		t.Fatalf("reconcile while serving: %d %q", code, errOut)
	}

	if r := l.call(t, "shed_lockedit_open", map[string]any{"zone": "documents", "path": "plan.md"}, "chat-a"); r["success"] != true {
		t.Fatal(r)
	}
	code, out, _ = run(t, base, "locks", "list")
	if code != 0 || !strings.Contains(out, "plan.md") || !strings.Contains(out, "chat-a") {
		t.Fatalf("locks list: %d %q", code, out)
	}
	zone := strings.Fields(strings.Split(out, "\n")[1])[0]
	if code, _, errOut := run(t, base, "locks", "release", zone, "plan.md"); code != 0 {
		t.Fatalf("locks release: %d %s", code, errOut)
	}
	if r := l.call(t, "shed_lockedit_save", map[string]any{"zone": "documents", "path": "plan.md"}, "chat-a"); r["success"] == true {
		t.Fatalf("save after an operator released the lock: %v", r)
	}
	if code, _, _ := run(t, base, "locks", "release", zone, "plan.md"); code != 1 {
		t.Fatal("releasing a lock that does not exist succeeded")
	}

	// The server writes the trail in the background: wait for it.
	out = ""
	for i := 0; i < 200 && !strings.Contains(out, "plan.md"); i++ {
		time.Sleep(10 * time.Millisecond)
		code, out, _ = run(t, base, "audit", "export", "--user", "local")
	}
	if code != 0 || !strings.Contains(out, `"tool":"shed_create_file"`) || !strings.Contains(out, `"path":"plan.md"`) {
		t.Fatalf("audit export: %d %q", code, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("not a JSON line: %q", line)
		}
	}
	if code, out, _ := run(t, base, "audit", "export", "--user", "nobody"); code != 0 || out != "" {
		t.Fatalf("audit export of another user: %q", out)
	}
	if code, out, _ := run(t, base, "audit", "prune", "--older-than-days", "1"); code != 0 || !strings.Contains(out, "pruned 0") {
		t.Fatalf("audit prune: %d %q", code, out)
	}

	code, out, _ = run(t, base, "sandbox", "ls", "user", "local", "notes")
	if code != 0 || !strings.Contains(out, "a.txt") {
		t.Fatalf("sandbox ls: %d %q", code, out)
	}
	for _, bad := range [][]string{{"sandbox", "ls", "user", "local", "../../.."}, {"sandbox", "ls", "user", "../x"}, {"sandbox", "ls", "user", "local", "/etc"}} {
		if code, out, _ := run(t, base, bad...); code == 0 {
			t.Fatalf("sandbox ls %v escaped: %q", bad, out)
		}
	}

	l.close()
	code, out, _ = run(t, base, "quota", "reconcile", "--user", "local")
	if code != 0 || !strings.Contains(out, "local") {
		t.Fatalf("reconcile with the server stopped: %d %q", code, out)
	}
}

// TestAdminBackupWhileWritingThenRestore: a backup taken while clients write is restorable:
// every repository verifies, the files are there, usage matches the disk.
func TestAdminBackupWhileWritingThenRestore(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	l := serve(t, base)
	for i := range 20 {
		l.ok(t, "shed_create_file", map[string]any{"zone": "documents", "path": fmt.Sprintf("d/%02d.md", i), "content": "seed\n"})
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				l.call(t, "shed_patch_text", map[string]any{"zone": "documents", "path": fmt.Sprintf("d/%02d.md", w), "content": fmt.Sprintf("w%d-%d\n", w, n)}, "")
				l.call(t, "shed_create_file", map[string]any{"zone": "storage", "path": fmt.Sprintf("s/%d-%d.txt", w, n), "content": "x"}, "")
			}
		}()
	}
	backup := filepath.Join(t.TempDir(), "backup")
	code, _, errOut := run(t, base, "backup", backup)
	close(stop)
	wg.Wait()
	if code != 0 {
		t.Fatalf("backup: %s", errOut)
	}
	if code, _, errOut := run(t, base, "backup", backup); code == 0 || !strings.Contains(errOut, "not empty") {
		t.Fatalf("backup into a non-empty dir: %d %s", code, errOut)
	}

	// Restore refuses a live storage, and one that holds data without --force.
	if code, _, errOut := run(t, base, "restore", backup, "--force"); code == 0 || !strings.Contains(errOut, "server is running") {
		t.Fatalf("restore over a live server: %d %s", code, errOut)
	}
	l.close()
	if code, _, errOut := run(t, base, "restore", backup); code == 0 || !strings.Contains(errOut, "--force") {
		t.Fatalf("restore over data without --force: %d %s", code, errOut)
	}
	target := t.TempDir()
	if code, out, errOut := run(t, target, "restore", backup); code != 0 {
		t.Fatalf("restore: %s %s", out, errOut)
	}
	code, out, errOut := run(t, target, "verify")
	if code != 0 {
		t.Fatalf("verify of the restored storage: %s %s", out, errOut)
	}
	r := serve(t, target)
	got := r.call(t, "shed_read", map[string]any{"zone": "documents", "path": "d/19.md"}, "")
	if got["success"] != true || !strings.Contains(fmt.Sprint(got["data"]), "seed") {
		t.Fatalf("restored file: %v", got)
	}
	if h := r.call(t, "shed_history", map[string]any{"zone": "documents", "path": "d/19.md"}, ""); h["success"] != true {
		t.Fatalf("history after restore: %v", h)
	}
}

// TestAdminVerifyFindsDrift: a file written behind the server's back makes verify report a
// quota mismatch and exit 1.
func TestAdminVerifyFindsDrift(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	l := serve(t, base)
	l.ok(t, "shed_create_file", map[string]any{"zone": "documents", "path": "a.md", "content": "a"})
	if code, out, errOut := run(t, base, "verify"); code != 0 {
		t.Fatalf("verify of a sound storage: %s %s", out, errOut)
	}
	if err := os.MkdirAll(filepath.Join(base, "users/local/Storage/data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "users/local/Storage/data/behind.txt"), []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, base, "verify")
	if code != 1 || !strings.Contains(out, `"on_disk_bytes"`) {
		t.Fatalf("verify with drift: %d %q", code, out)
	}
}

// TestAdminOnMissingStorageCreatesNothing: a mistyped storage path fails every command
// that reads a storage, naming the path, and creates nothing there (verify used to create
// an empty store at the typo and report "problems: 0").
func TestAdminOnMissingStorageCreatesNothing(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "old.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("k", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"verify"}, {"quota", "show"}, {"quota", "reconcile"}, {"locks", "list"}, {"locks", "release", "user:alice:documents", "a.md"},
		{"audit", "export"}, {"audit", "prune"}, {"sandbox", "ls", "user", "alice"}, {"links", "list"}, {"links", "revoke", "00"},
		{"backup", filepath.Join(t.TempDir(), "b")}, {"encryption", "rotate", "--old-key-file", keyFile}, {"migrate"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "typo", "data")
			code, out, errb := run(t, base, args...)
			if code != 1 || !strings.Contains(errb, base) || !strings.Contains(errb, "does not exist") {
				t.Fatalf("exit %d, stderr %q, stdout %q", code, errb, out)
			}
			if _, err := os.Stat(filepath.Dir(base)); !os.IsNotExist(err) {
				t.Fatalf("the command created the missing storage path: %v", err)
			}
		})
	}
}
