package admin_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/handlers"
	"github.com/fileshed/fileshed/internal/testtool"
)

// deepLevels is how deep each `mkdir -p` goes: 1,900 levels of "d/" is 3,800 bytes, just
// under PATH_MAX (4,096); two of them joined by a `mv` make a tree no full path can name.
const deepLevels = 1900

// as calls a tool as user in headers mode and returns the envelope.
func as(t *testing.T, srv *httptest.Server, user, tool string, body map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/"+tool, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer k-deep")
	req.Header.Set("X-OpenWebUI-User-Id", user)
	req.Header.Set("X-OpenWebUI-Chat-Id", "c-"+user)
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

// plantDeepTree builds, as the attacker would with three shed_exec calls, a tree deeper
// than PATH_MAX in the zone given by args (zone, group), with a file at its bottom.
func plantDeepTree(t *testing.T, srv *httptest.Server, user string, args map[string]any) {
	t.Helper()
	chain := strings.Repeat("d/", deepLevels-1) + "d"
	for _, call := range [][]string{{"mkdir", "-p", "a/" + chain}, {"mkdir", "-p", "b/" + chain}, {"mv", "b", "a/" + chain + "/"}} {
		body := map[string]any{"cmd": call[0], "args": call[1:], "timeout": 120}
		for k, v := range args {
			body[k] = v
		}
		if r := as(t, srv, user, "shed_exec", body); r["success"] != true || r["data"].(map[string]any)["returncode"] != 0.0 {
			t.Fatalf("%v: %v", call, r)
		}
	}
}

// deepest opens, one level at a time, the bottom folder of the planted tree under dir and
// returns the names it holds (nil when the chain is not all there).
func deepest(t *testing.T, dir string) []string {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil
	}
	names := append([]string{"a"}, strings.Split(strings.Repeat("d/", deepLevels)+"b/"+strings.Repeat("d/", deepLevels-1)+"d", "/")...)
	for _, n := range names {
		next, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		unix.Close(fd)
		if err != nil {
			return nil
		}
		fd = next
	}
	f := os.NewFile(uintptr(fd), "bottom")
	defer f.Close()
	got, _ := f.Readdirnames(-1)
	return append([]string{}, got...)
}

// TestOperatorToolsSurviveTreeDeeperThanPathMax (issue 24 finding 8): one member plants a
// tree deeper than PATH_MAX in a group space and in their own Storage. shed_maintenance
// still works for every other member, `fileshed admin verify` checks every owner, and
// `fileshed admin backup` copies everything, the deep tree included, into a backup that
// restores and verifies.
func TestOperatorToolsSurviveTreeDeeperThanPathMax(t *testing.T) {
	t.Parallel() // owns its storage, its server and its backup (issue 34)
	// Three copies of 7,600 folders (the storage, the backup, the restored storage): tmpfs
	// makes and removes them in a fraction of ext4's kernel time.
	base := testtool.MemDir(t)
	cfg := config(t, base)
	cfg.Auth.Mode, cfg.Auth.APIKey = "headers", "k-deep"
	cfg.Groups.Static = map[string][]string{"team": {"mallory", "bob"}}
	h, _, svc, err := handlers.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			srv.Close()
			svc.Close()
		}
	}
	t.Cleanup(stop)
	team := map[string]any{"zone": "group", "group": "team"}
	if r := as(t, srv, "bob", "shed_create_file", map[string]any{"zone": "group", "group": "team", "path": "bob.md", "content": "bob's\n"}); r["success"] != true {
		t.Fatal(r)
	}
	if r := as(t, srv, "carol", "shed_create_file", map[string]any{"zone": "storage", "path": "c.txt", "content": "carol's\n"}); r["success"] != true {
		t.Fatal(r)
	}
	plantDeepTree(t, srv, "mallory", team)
	plantDeepTree(t, srv, "mallory", map[string]any{"zone": "storage"})
	if r := as(t, srv, "mallory", "shed_create_file", map[string]any{"zone": "storage", "path": "m.txt", "content": "m\n"}); r["success"] != true {
		t.Fatal(r)
	}

	r := as(t, srv, "bob", "shed_maintenance", nil)
	if r["success"] != true {
		t.Fatalf("maintenance of another member: %v", r)
	}
	if r := as(t, srv, "bob", "shed_stats", nil); r["success"] != true {
		t.Fatalf("stats of another member: %v", r)
	}
	stop()

	code, out, errOut := run(t, base, "verify")
	if code != 0 {
		t.Fatalf("verify: %d %s %s", code, out, errOut)
	}
	for _, who := range []string{`"id": "bob"`, `"id": "carol"`, `"id": "mallory"`, `"id": "team"`} {
		if !strings.Contains(out, who) {
			t.Fatalf("verify does not report %s: %s", who, out)
		}
	}
	backup := filepath.Join(testtool.MemDir(t), "backup")
	if code, out, errOut := run(t, base, "backup", backup); code != 0 {
		t.Fatalf("backup: %d %s %s", code, out, errOut)
	}
	for _, dir := range []string{"groups/team/data", "users/mallory/Storage/data"} {
		if deepest(t, filepath.Join(base, dir)) == nil {
			t.Fatalf("%s: the attack did not build the tree", dir)
		}
		if deepest(t, filepath.Join(backup, dir)) == nil {
			t.Fatalf("%s: the deep tree is not whole in the backup", dir)
		}
	}
	restored := testtool.MemDir(t)
	if code, out, errOut := run(t, restored, "restore", backup); code != 0 {
		t.Fatalf("restore: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := run(t, restored, "verify"); code != 0 {
		t.Fatalf("verify of the restored storage: %d %s %s", code, out, errOut)
	}
	for _, f := range []string{"groups/team/data/bob.md", "users/carol/Storage/data/c.txt", "users/mallory/Storage/data/m.txt"} {
		if _, err := os.Stat(filepath.Join(restored, f)); err != nil {
			t.Fatalf("restored %s: %v", f, err)
		}
	}
}

// TestRestoreRefusesUnfinishedBackup: a backup that did not finish (no manifest, written
// last) never passes for a complete one.
func TestRestoreRefusesUnfinishedBackup(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	l := serve(t, base)
	l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": "a.txt", "content": "a"})
	l.close()
	backup := filepath.Join(testtool.MemDir(t), "backup")
	if code, out, errOut := run(t, base, "backup", backup); code != 0 {
		t.Fatalf("backup: %d %s %s", code, out, errOut)
	}
	var rep struct {
		Finished     string   `json:"finished"`
		Skipped      []string `json:"skipped"`
		SkippedCount int      `json:"skipped_count"`
	}
	b, err := os.ReadFile(filepath.Join(backup, "fileshed-backup.json"))
	if err != nil || json.Unmarshal(b, &rep) != nil || rep.Finished == "" || rep.Skipped == nil || rep.SkippedCount != 0 {
		t.Fatalf("manifest: %s %v", b, err)
	}
	if err := os.Remove(filepath.Join(backup, "fileshed-backup.json")); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, t.TempDir(), "restore", backup)
	if code != 1 || !strings.Contains(errOut, "not a finished backup") {
		t.Fatalf("restore of an unfinished backup: %d %s", code, errOut)
	}
}
