package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockExpiry: a lock older than lock_max_age_hours is taken over by another
// conversation, the old holder's save is refused, and shed_maintenance releases expired
// locks and removes orphan working copies.
func TestLockExpiry(t *testing.T) {
	e := start(t, map[string]string{"FILESHED_LOCK_MAX_AGE_HOURS": "2"})
	e.write("users/local/Storage/data/a.txt", "v1")
	e.write("users/local/Storage/data/b.txt", "v1")
	a, b := conv("chat-a"), conv("chat-b")
	body := map[string]any{"zone": "storage", "path": "a.txt"}
	wantOK(t, e.post("shed_lockedit_open", body, a))
	backdate(t, e, "a.txt", time.Hour)
	wantError(t, e.post("shed_lockedit_open", body, b), "FILE_LOCKED") // 1 h < 2 h: still valid
	backdate(t, e, "a.txt", 3*time.Hour)
	wantOK(t, e.post("shed_lockedit_open", body, b)) // expired: taken over
	wantError(t, e.post("shed_lockedit_save", body, a), "FILE_LOCKED")
	// b.txt: an expired lock nobody took over, released by maintenance with its copy.
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "b.txt"}, a))
	backdate(t, e, "b.txt", 3*time.Hour)
	r := e.post("shed_maintenance", nil, a)
	wantOK(t, r)
	expired, _ := r.Data["expired_locks"].([]any)
	orphans, _ := r.Data["orphan_editzones"].([]any)
	if len(expired) != 1 || expired[0] != "Storage/b.txt" || len(orphans) != 1 || orphans[0] != "Storage/editzone/chat-a/a.txt" {
		t.Fatalf("maintenance: %s", r.raw)
	}
	if r.Message != "Maintenance complete: 2 element(s) cleaned" {
		t.Fatalf("message: %q", r.Message)
	}
	if exists(e, "users/local/Storage/editzone/chat-a") || !exists(e, "users/local/Storage/editzone/chat-b/a.txt") {
		t.Fatal("maintenance must remove A's copies and keep B's (B holds a valid lock)")
	}
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "b.txt"}, b))
	wantOK(t, e.post("shed_lockedit_save", body, b))
	// Nothing left to clean; quota reconciled with the disk.
	r = e.post("shed_maintenance", nil, b)
	wantOK(t, r)
	if r.Message != "Maintenance complete: 0 element(s) cleaned" {
		t.Fatalf("second run: %s", r.raw)
	}
	q, _ := r.Data["quota"].([]any)
	// a.txt and b.txt, and B's working copy of b.txt: it counts until saved or cancelled.
	if len(q) != 1 || q[0].(map[string]any)["measured_bytes"] != float64(6) || q[0].(map[string]any)["recorded_bytes"] != float64(6) {
		t.Fatalf("quota reconcile: %s", r.raw)
	}
}

// TestSaveRefusesWorkingCopySymlinkOut: a working copy replaced by a symlink to another
// user's file (what a command in the editzone could try) is never copied into the zone.
func TestSaveRefusesWorkingCopySymlinkOut(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Storage/data/a.txt", "mine")
	secret := e.write("users/other/Storage/data/secret.txt", "other user's secret")
	a := conv("chat-a")
	body := map[string]any{"zone": "storage", "path": "a.txt"}
	wantOK(t, e.post("shed_lockedit_open", body, a))
	wc := filepath.Join(e.base, "users/local/Storage/editzone/chat-a/a.txt")
	if err := os.Remove(wc); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, wc); err != nil {
		t.Fatal(err)
	}
	wantError(t, e.post("shed_lockedit_save", body, a), "PATH_ESCAPE")
	if got := readFile(t, e, "users/local/Storage/data/a.txt"); got != "mine" {
		t.Fatalf("original became %q", got)
	}
	wantError(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "a.txt", "content": "x", "append": true}, a), "PATH_ESCAPE")
	if readFile(t, e, "users/other/Storage/data/secret.txt") != "other user's secret" {
		t.Fatal("append went through the symlink")
	}
}

func TestLockeditSaveQuota(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1"})
	e.write("users/local/Storage/data/a.txt", "small")
	a := conv("chat-a")
	body := map[string]any{"zone": "storage", "path": "a.txt"}
	wantOK(t, e.post("shed_lockedit_open", body, a))
	// The working copy counts: a copy over the quota is refused at its overwrite.
	r := e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "a.txt", "content": strings.Repeat("x", 1<<20+1)}, a)
	wantError(t, r, "QUOTA_EXCEEDED")
	if readFile(t, e, "users/local/Storage/data/a.txt") != "small" || readFile(t, e, "users/local/Storage/editzone/chat-a/a.txt") != "small" {
		t.Fatal("original or working copy changed")
	}
	// The lock is kept for a retry: shrink and save (a counted copy's save needs no room).
	wantOK(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "a.txt", "content": "fits"}, a))
	wantOK(t, e.post("shed_lockedit_save", body, a))
}

func TestLockeditArguments(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_MAX_FILE_SIZE_MB": "1"})
	e.write("users/local/Storage/data/file.txt", "x")
	e.write("users/local/Storage/data/dir/inner.txt", "x")
	e.write("users/other/Storage/data/secret.txt", "s")
	e.write("users/local/Uploads/chat-a/up.txt", "u")
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(e.base, "users/local/Storage/data", name)); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(e.base, "users/other/Storage/data/secret.txt"), "abs-out")
	link("../../../other/Storage/data/secret.txt", "rel-out")
	link("nowhere.txt", "dangling")
	st := func(extra map[string]any) map[string]any {
		m := map[string]any{"zone": "storage"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name, tool string
		body       any
		code       string
	}{
		{"open missing path", "shed_lockedit_open", st(nil), "MISSING_PARAMETER"},
		{"open missing zone", "shed_lockedit_open", map[string]any{"path": "file.txt"}, "MISSING_PARAMETER"},
		{"open uploads", "shed_lockedit_open", map[string]any{"zone": "uploads", "path": "up.txt"}, "ZONE_READONLY"},
		{"open bad zone", "shed_lockedit_open", map[string]any{"zone": "etc", "path": "x"}, "INVALID_ZONE"},
		{"open traversal", "shed_lockedit_open", st(map[string]any{"path": "../../other/Storage/data/secret.txt"}), "PATH_ESCAPE"},
		{"open absolute", "shed_lockedit_open", st(map[string]any{"path": "/etc/passwd"}), "PATH_ESCAPE"},
		{"open NUL", "shed_lockedit_open", st(map[string]any{"path": "a\x00b"}), "INVALID_PATH"},
		{"open huge name", "shed_lockedit_open", st(map[string]any{"path": strings.Repeat("n", 5000)}), "INVALID_PATH"},
		{"open zone prefix", "shed_lockedit_open", st(map[string]any{"path": "storage/file.txt"}), "PATH_STARTS_WITH_ZONE"},
		{"open directory", "shed_lockedit_open", st(map[string]any{"path": "dir"}), "NOT_A_FILE"},
		{"open zone root", "shed_lockedit_open", st(map[string]any{"path": "."}), "NOT_A_FILE"},
		{"open missing file", "shed_lockedit_open", st(map[string]any{"path": "nope.txt"}), "FILE_NOT_FOUND"},
		{"open symlink absolute out", "shed_lockedit_open", st(map[string]any{"path": "abs-out"}), "PATH_ESCAPE"},
		{"open symlink relative out", "shed_lockedit_open", st(map[string]any{"path": "rel-out"}), "PATH_ESCAPE"},
		{"open dangling symlink", "shed_lockedit_open", st(map[string]any{"path": "dangling"}), "FILE_NOT_FOUND"},
		{"overwrite not open", "shed_lockedit_overwrite", st(map[string]any{"path": "file.txt", "content": "x"}), "NOT_IN_EDIT_MODE"},
		{"overwrite no content", "shed_lockedit_overwrite", st(map[string]any{"path": "file.txt"}), "MISSING_PARAMETER"},
		{"overwrite NUL content", "shed_lockedit_overwrite", st(map[string]any{"path": "file.txt", "content": "a\x00"}), "INVALID_PARAMETER"},
		{"overwrite append not bool", "shed_lockedit_overwrite", st(map[string]any{"path": "file.txt", "content": "a", "append": "sure"}), "INVALID_PARAMETER"},
		{"save not open", "shed_lockedit_save", st(map[string]any{"path": "file.txt"}), "NOT_IN_EDIT_MODE"},
		{"save traversal", "shed_lockedit_save", st(map[string]any{"path": "../x"}), "PATH_ESCAPE"},
		{"cancel not open", "shed_lockedit_cancel", st(map[string]any{"path": "file.txt"}), "NOT_IN_EDIT_MODE"},
		{"force unlock no zone", "shed_force_unlock", map[string]any{"path": "file.txt"}, "MISSING_PARAMETER"},
		{"force unlock no path", "shed_force_unlock", map[string]any{"zone": "storage"}, "MISSING_PARAMETER"},
		{"force unlock uploads", "shed_force_unlock", map[string]any{"zone": "uploads", "path": "up.txt"}, "ZONE_FORBIDDEN"},
		{"force unlock traversal", "shed_force_unlock", st(map[string]any{"path": "../../other/Storage/data/secret.txt"}), "PATH_ESCAPE"},
		{"force unlock group unavailable", "shed_force_unlock", map[string]any{"group": "team", "path": "x"}, "GROUP_NOT_AVAILABLE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(tc.tool, tc.body, conv("chat-a"))
			wantError(t, r, tc.code)
			if (tc.code == "INVALID_PARAMETER" || tc.code == "MISSING_PARAMETER") && !strings.HasPrefix(r.Usage, tc.tool+"(") {
				t.Fatalf("parameter error without usage: %s", r.raw)
			}
		})
	}
	t.Run("overwrite too large", func(t *testing.T) {
		a := conv("chat-big")
		wantOK(t, e.post("shed_lockedit_open", st(map[string]any{"path": "file.txt"}), a))
		r := e.post("shed_lockedit_overwrite", st(map[string]any{"path": "file.txt", "content": strings.Repeat("y", 1<<20), "append": true}), a)
		wantError(t, r, "FILE_TOO_LARGE") // 1 MiB appended to 1 byte: over max_file_size_mb=1
		wantOK(t, e.post("shed_lockedit_cancel", st(map[string]any{"path": "file.txt"}), a))
	})
	if readFile(t, e, "users/other/Storage/data/secret.txt") != "s" {
		t.Fatal("other user's file touched")
	}
}

// TestLockErrorWhenStateDatabaseFails: a state database that cannot record locks answers
// LOCK_ERROR and leaves no working copy behind.
func TestLockErrorWhenStateDatabaseFails(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Storage/data/a.txt", "v1")
	if _, err := stateDB(t, e).Exec(`ALTER TABLE locks RENAME TO locks_gone`); err != nil {
		t.Fatal(err)
	}
	r := e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "a.txt"}, conv("chat-a"))
	wantError(t, r, "LOCK_ERROR")
	if exists(e, "users/local/Storage/editzone/chat-a/a.txt") {
		t.Fatal("working copy left without a lock")
	}
}

// TestLockeditExecConfinedToWorkingCopy: the command sees the working copy and nothing
// else: not the original, not its siblings, not the conversation's other working copies,
// whatever the arguments or a symlink planted next to the copy say.
func TestLockeditExecConfinedToWorkingCopy(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Storage/data/sub/a.txt", "hello world\n")
	e.write("users/local/Storage/data/sub/sibling.txt", "sibling secret\n")
	e.write("users/local/Storage/data/sub/b.txt", "other copy secret\n")
	a := conv("chat-a")
	open := func(p string) {
		wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": p}, a))
	}
	open("sub/a.txt")
	open("sub/b.txt")
	orig := filepath.Join(e.base, "users/local/Storage/data/sub/sibling.txt")
	if err := os.Symlink(orig, filepath.Join(e.base, "users/local/Storage/editzone/chat-a/sub/planted")); err != nil {
		t.Fatal(err)
	}
	run := func(cmd string, args ...string) reply {
		return e.post("shed_lockedit_exec", map[string]any{"zone": "storage", "path": "sub/a.txt", "cmd": cmd, "args": args}, a)
	}
	r := run("sed", "-i", "s/world/there/", ".")
	wantOK(t, r)
	if r.Data["returncode"] != float64(0) || r.Data["path"] != "sub/a.txt" || r.Message != "Command executed in editzone" {
		t.Fatalf("sed: %s", r.raw)
	}
	if readFile(t, e, "users/local/Storage/editzone/chat-a/sub/a.txt") != "hello there\n" || readFile(t, e, "users/local/Storage/data/sub/a.txt") != "hello world\n" {
		t.Fatal("the command must change the working copy only")
	}
	r = run("ls", "-a")
	wantOK(t, r)
	if got := strings.Fields(r.Data["stdout"].(string)); strings.Join(got, " ") != ". .. a.txt" {
		t.Fatalf("the command sees more than its copy: %q", got)
	}
	for _, tc := range []struct{ name, arg, code string }{
		{"original by relative path", "../../../data/sub/a.txt", "PATH_ESCAPE"},
		{"sibling copy", "../b.txt", "PATH_ESCAPE"},
		{"absolute path", "/etc/hostname", "PATH_ESCAPE"},
		{"zone-relative name of a sibling", "sibling.txt", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run("cat", tc.arg)
			if tc.code != "" {
				wantError(t, r, tc.code)
			} else if !r.Success || r.Data["returncode"] == float64(0) {
				t.Fatalf("want a failing cat: %s", r.raw)
			}
			if strings.Contains(r.raw, "secret") {
				t.Fatalf("content leaked: %s", r.raw)
			}
		})
	}
	r = run("cat", "planted")
	if r.Success && (r.Data["returncode"] == float64(0) || strings.Contains(r.raw, "secret")) {
		t.Fatalf("planted symlink followed: %s", r.raw)
	}
	wantError(t, run("git", "log"), "COMMAND_FORBIDDEN")
	wantOK(t, run("cp", ".", "extra.txt"))
	if exists(e, "users/local/Storage/editzone/chat-a/sub/extra.txt") {
		t.Fatal("files made by the command must not stay next to the copy")
	}
	wantOK(t, e.post("shed_lockedit_save", map[string]any{"zone": "storage", "path": "sub/a.txt"}, a))
	if readFile(t, e, "users/local/Storage/data/sub/a.txt") != "hello there\n" {
		t.Fatal("save after exec")
	}
	wantError(t, run("cat", "."), "NOT_IN_EDIT_MODE")
	wantError(t, e.post("shed_lockedit_exec", map[string]any{"zone": "storage", "path": "sub/b.txt", "cmd": "cat", "args": []string{"."}}, conv("chat-b")), "FILE_LOCKED")
	// A command that deletes the copy leaves no edit to save.
	r = e.post("shed_lockedit_exec", map[string]any{"zone": "storage", "path": "sub/b.txt", "cmd": "rm", "args": []string{"."}}, a)
	wantError(t, r, "NOT_IN_EDIT_MODE")
	wantError(t, e.post("shed_lockedit_save", map[string]any{"zone": "storage", "path": "sub/b.txt"}, a), "NOT_IN_EDIT_MODE")
	if readFile(t, e, "users/local/Storage/data/sub/b.txt") != "other copy secret\n" {
		t.Fatal("original changed")
	}
}
