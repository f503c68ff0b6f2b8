package handlers_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// edit runs a whole locked edit (open, overwrite, save) of a Documents file.
func edit(t *testing.T, e *env, chat, path, content, message string) reply {
	t.Helper()
	h := conv(chat)
	if r := e.post("shed_lockedit_open", map[string]any{"zone": "documents", "path": path}, h); !r.Success {
		return r
	}
	if r := e.post("shed_lockedit_overwrite", map[string]any{"zone": "documents", "path": path, "content": content}, h); !r.Success {
		return r
	}
	return e.post("shed_lockedit_save", map[string]any{"zone": "documents", "path": path, "message": message}, h)
}

// git runs the git CLI read-only against the user's Documents repository.
func git(t testing.TB, e *env, args ...string) string {
	t.Helper()
	// Commits save the git index lazily; shed_exec git flushes it first, as here.
	wantOK(t, e.post("shed_exec", map[string]any{"zone": "documents", "cmd": "git", "args": []string{"status"}}, nil))
	space := filepath.Join(e.base, "users/local/Documents")
	cmd := exec.Command("git", append([]string{"--git-dir=" + filepath.Join(space, "repo.git"), "--work-tree=" + filepath.Join(space, "data")}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func history(t *testing.T, e *env, path string) []map[string]any {
	t.Helper()
	r := e.post("shed_history", map[string]any{"zone": "documents", "path": path}, nil)
	wantOK(t, r)
	var out []map[string]any
	for _, x := range r.Data["entries"].([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

func TestLockeditSaveCommits(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Documents/data/notes/plan.md", "v1")
	r := edit(t, e, "chat-a", "notes/plan.md", "v2", "")
	wantOK(t, r)
	if r.Data["committed"] != true || len(r.Data["commit"].(string)) != 40 {
		t.Fatalf("save in documents must commit: %s", r.raw)
	}
	wantOK(t, edit(t, e, "chat-a", "notes/plan.md", "v3", "my message"))
	h := history(t, e, "notes/plan.md")
	if len(h) != 2 || h[0]["message"] != "my message" || h[1]["message"] != "shed_lockedit_save: notes/plan.md" || h[0]["author"] != "local" {
		t.Fatalf("history: %v", h)
	}
	if got := git(t, e, "show", "HEAD:notes/plan.md"); got != "v3" {
		t.Fatalf("HEAD content %q", got)
	}
	// An unchanged save makes no commit.
	r = edit(t, e, "chat-a", "notes/plan.md", "v3", "")
	wantOK(t, r)
	if r.Data["committed"] != false {
		t.Fatalf("empty change committed: %s", r.raw)
	}
}

func TestHistoryAndRestore(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Documents/data/a.txt", "v1")
	wantOK(t, edit(t, e, "c", "a.txt", "v2", "second"))
	wantOK(t, edit(t, e, "c", "a.txt", "v3", "third"))
	h := history(t, e, "a.txt")
	if len(h) != 2 {
		t.Fatalf("history: %v", h)
	}
	r := e.post("shed_restore", map[string]any{"zone": "documents", "path": "a.txt", "version": "HEAD~1"}, nil)
	wantOK(t, r)
	if r.Data["committed"] != true || readFile(t, e, "users/local/Documents/data/a.txt") != "v2" {
		t.Fatalf("restore HEAD~1: %s", r.raw)
	}
	h2 := history(t, e, ".")
	if len(h2) != 3 || h2[0]["message"] != "shed_restore: a.txt from HEAD~1" || h2[2]["hash"] != h[1]["hash"] {
		t.Fatalf("restore must add a commit, never move HEAD back: %v", h2)
	}
	// Restoring what is already there commits nothing.
	r = e.post("shed_restore", map[string]any{"zone": "documents", "path": "a.txt", "version": h[1]["short"]}, nil)
	wantOK(t, r)
	if r.Data["committed"] != false {
		t.Fatalf("identical restore committed: %s", r.raw)
	}
	r = e.post("shed_restore", map[string]any{"zone": "documents", "path": "a.txt", "version": h[0]["hash"], "message": "back to v3"}, nil)
	wantOK(t, r)
	if readFile(t, e, "users/local/Documents/data/a.txt") != "v3" || history(t, e, "a.txt")[0]["message"] != "back to v3" {
		t.Fatalf("restore by hash: %s", r.raw)
	}
	// A deleted file comes back (the deletion here bypasses the tools, as a command would).
	if err := os.Remove(filepath.Join(e.base, "users/local/Documents/data/a.txt")); err != nil {
		t.Fatal(err)
	}
	wantOK(t, e.post("shed_restore", map[string]any{"zone": "documents", "path": "a.txt", "version": "HEAD"}, nil))
	if readFile(t, e, "users/local/Documents/data/a.txt") != "v3" {
		t.Fatal("deleted file not restored")
	}
	// A file locked by another conversation cannot be restored.
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "documents", "path": "a.txt"}, conv("other")))
	r = e.post("shed_restore", map[string]any{"zone": "documents", "path": "a.txt", "version": "HEAD~1"}, conv("mine"))
	wantError(t, r, "FILE_LOCKED")
	if r.Details["locked_by_conversation"] != "other" || readFile(t, e, "users/local/Documents/data/a.txt") != "v3" {
		t.Fatalf("restore over a lock: %s", r.raw)
	}
	// An expired lock (lock_max_age_hours, 24 by default) no longer blocks other writers.
	backdate(t, e, "a.txt", 25*time.Hour)
	wantOK(t, e.post("shed_restore", map[string]any{"zone": "documents", "path": "a.txt", "version": "HEAD~1"}, conv("mine")))
	if got := git(t, e, "rev-list", "--count", "HEAD"); got != "5" {
		t.Fatalf("commits: %s", got)
	}
}

func TestHistoryRestoreArguments(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Documents/data/a.txt", "v1")
	e.write("users/local/Documents/data/d.txt", "v1")
	wantOK(t, edit(t, e, "c", "a.txt", "v2", ""))
	wantOK(t, edit(t, e, "c", "d.txt", "v2", ""))
	if err := os.Remove(filepath.Join(e.base, "users/local/Documents/data/d.txt")); err != nil {
		t.Fatal(err)
	}
	e.write("users/local/Documents/data/d.txt/inner", "now a folder")
	doc := func(extra map[string]any) map[string]any {
		m := map[string]any{"zone": "documents"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name, tool string
		body       map[string]any
		code       string
	}{
		{"history in storage", "shed_history", map[string]any{"zone": "storage"}, "ZONE_FORBIDDEN"},
		{"history in uploads", "shed_history", map[string]any{"zone": "uploads"}, "ZONE_FORBIDDEN"},
		{"history limit zero", "shed_history", doc(map[string]any{"limit": 0}), "INVALID_PARAMETER"},
		{"history limit huge", "shed_history", doc(map[string]any{"limit": 1000000}), "INVALID_PARAMETER"},
		{"history traversal", "shed_history", doc(map[string]any{"path": "../../other"}), "PATH_ESCAPE"},
		{"restore in storage", "shed_restore", map[string]any{"zone": "storage", "path": "a.txt", "version": "HEAD"}, "ZONE_FORBIDDEN"},
		{"restore in uploads", "shed_restore", map[string]any{"zone": "uploads", "path": "a.txt", "version": "HEAD"}, "ZONE_READONLY"},
		{"restore no version", "shed_restore", doc(map[string]any{"path": "a.txt"}), "MISSING_PARAMETER"},
		{"restore no path", "shed_restore", doc(map[string]any{"version": "HEAD"}), "MISSING_PARAMETER"},
		{"restore zone root", "shed_restore", doc(map[string]any{"path": ".", "version": "HEAD"}), "INVALID_PATH"},
		{"restore unknown hash", "shed_restore", doc(map[string]any{"path": "a.txt", "version": "deadbeef"}), "FILE_NOT_FOUND"},
		{"restore too far back", "shed_restore", doc(map[string]any{"path": "a.txt", "version": "HEAD~99"}), "FILE_NOT_FOUND"},
		{"restore branch name", "shed_restore", doc(map[string]any{"path": "a.txt", "version": "main"}), "FILE_NOT_FOUND"},
		{"restore option injection", "shed_restore", doc(map[string]any{"path": "a.txt", "version": "--output=/tmp/x"}), "FILE_NOT_FOUND"},
		{"restore path never versioned", "shed_restore", doc(map[string]any{"path": "nope.txt", "version": "HEAD"}), "FILE_NOT_FOUND"},
		{"restore traversal", "shed_restore", doc(map[string]any{"path": "../../other/x", "version": "HEAD"}), "PATH_ESCAPE"},
		{"restore absolute", "shed_restore", doc(map[string]any{"path": "/etc/passwd", "version": "HEAD"}), "PATH_ESCAPE"},
		{"restore NUL", "shed_restore", doc(map[string]any{"path": "a\x00", "version": "HEAD"}), "INVALID_PATH"},
		{"restore over a folder", "shed_restore", doc(map[string]any{"path": "d.txt", "version": "HEAD"}), "NOT_A_FILE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.post(tc.tool, tc.body, nil), tc.code)
		})
	}
	if readFile(t, e, "users/local/Documents/data/a.txt") != "v2" {
		t.Fatal("a refused restore changed the file")
	}
}

// TestConcurrentWritersOneDocumentsZone: 20 conversations edit 20 files of one Documents
// zone at once, twice each: every change is committed, history is linear, the repository
// is sound (run with -race: no data race in the service).
func TestConcurrentWritersOneDocumentsZone(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	const writers = 20
	for i := range writers {
		e.write(fmt.Sprintf("users/local/Documents/data/w/%02d.txt", i), "seed")
	}
	var wg sync.WaitGroup
	errs := make(chan string, writers*2)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 2 {
				p := fmt.Sprintf("w/%02d.txt", i)
				if r := edit(t, e, fmt.Sprintf("chat-%d", i), p, fmt.Sprintf("writer %d round %d", i, round), ""); !r.Success || r.Data["committed"] != true {
					errs <- r.raw
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	if got := git(t, e, "rev-list", "--count", "HEAD"); got != fmt.Sprint(writers*2) {
		t.Fatalf("commits: %s, want %d", got, writers*2)
	}
	if merges := git(t, e, "rev-list", "--min-parents=2", "HEAD"); merges != "" {
		t.Fatalf("history not linear: %s", merges)
	}
	git(t, e, "fsck", "--strict", "--no-dangling")
	if st := git(t, e, "status", "--porcelain"); st != "" {
		t.Fatalf("uncommitted changes: %s", st)
	}
	for i := range writers {
		if got := git(t, e, "show", fmt.Sprintf("HEAD:w/%02d.txt", i)); got != fmt.Sprintf("writer %d round 1", i) {
			t.Fatalf("file %d at HEAD: %q", i, got)
		}
	}
}

// TestUserGitConfigInZoneHasNoEffect: a .git/config with an fsmonitor command and a hook
// written into the zone (as a user command could) is never read by versioning.
func TestUserGitConfigInZoneHasNoEffect(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	marker := filepath.Join(t.TempDir(), "pwned")
	e.write("users/local/Documents/data/.git/config", fmt.Sprintf("[core]\n\tfsmonitor = \"touch %s\"\n\thooksPath = hooks\n", marker))
	hook := e.write("users/local/Documents/data/.git/hooks/pre-commit", "#!/bin/sh\ntouch "+marker+"\n")
	if err := os.Chmod(hook, 0o700); err != nil {
		t.Fatal(err)
	}
	e.write("users/local/Documents/data/a.txt", "v1")
	wantOK(t, edit(t, e, "c", "a.txt", "v2", ""))
	wantOK(t, e.post("shed_restore", map[string]any{"zone": "documents", "path": "a.txt", "version": "HEAD"}, nil))
	wantOK(t, e.post("shed_maintenance", nil, nil))
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a command from the zone's .git ran")
	}
	if files := git(t, e, "ls-tree", "-r", "--name-only", "HEAD"); files != "a.txt" {
		t.Fatalf("committed files: %q", files)
	}
	if len(history(t, e, ".")) != 1 {
		t.Fatal("history changed by the zone's .git")
	}
}

// TestDamagedRepositoryReportedAndRepaired: what a kill -9 during a commit leaves (stale
// lock files), a garbage index and a broken branch ref are reported clearly (never a
// panic) and shed_maintenance repairs what can be repaired, committing what was left out.
func TestDamagedRepositoryReportedAndRepaired(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Documents/data/a.txt", "v1")
	wantOK(t, edit(t, e, "c", "a.txt", "v2", ""))
	gitDir := filepath.Join(e.base, "users/local/Documents/repo.git")

	// 1. Stale index.lock (the writer died holding it): the save writes, reports the commit
	// failure, and maintenance removes the lock and commits the pending change.
	if err := os.WriteFile(filepath.Join(gitDir, "index.lock"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := edit(t, e, "c", "a.txt", "v3", "")
	wantError(t, r, "EXECUTION_ERROR")
	if !strings.Contains(r.Message, "not committed") || !strings.Contains(r.Hint, "maintenance") {
		t.Fatalf("unclear commit failure: %s", r.raw)
	}
	if readFile(t, e, "users/local/Documents/data/a.txt") != "v3" || exists(e, "users/local/Documents/editzone/c/a.txt") {
		t.Fatal("the save itself must be done and the edit closed")
	}
	r = e.post("shed_maintenance", nil, nil)
	wantOK(t, r)
	repo := r.Data["repositories"].([]any)[0].(map[string]any)
	if repo["status"] != "repaired" || fmt.Sprint(repo["removed_locks"]) != "[index.lock]" || repo["committed_pending"] == nil {
		t.Fatalf("maintenance after a crash: %s", r.raw)
	}
	if got := git(t, e, "show", "HEAD:a.txt"); got != "v3" {
		t.Fatalf("pending change not committed: %q", got)
	}
	wantOK(t, edit(t, e, "c", "a.txt", "v4", ""))

	// 2. A garbage index: reported by Verify, rebuilt by maintenance.
	if err := os.WriteFile(filepath.Join(gitDir, "index"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.post("shed_maintenance", nil, nil)
	wantOK(t, r)
	repo = r.Data["repositories"].([]any)[0].(map[string]any)
	if repo["status"] != "repaired" || repo["index_rebuilt"] != true || !strings.Contains(fmt.Sprint(repo["problem"]), "index") {
		t.Fatalf("maintenance of a garbage index: %s", r.raw)
	}
	git(t, e, "fsck", "--strict", "--no-dangling")
	wantOK(t, edit(t, e, "c", "a.txt", "v5", ""))

	// 3. An empty branch ref (cannot be invented back): every history tool reports it and
	// maintenance says the repository is damaged.
	if err := os.WriteFile(filepath.Join(gitDir, "refs/heads/main"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.post("shed_history", map[string]any{"zone": "documents"}, nil)
	wantError(t, r, "EXECUTION_ERROR")
	wantError(t, e.post("shed_restore", map[string]any{"zone": "documents", "path": "a.txt", "version": "HEAD~1"}, nil), "EXECUTION_ERROR")
	r = e.post("shed_maintenance", nil, nil)
	wantOK(t, r)
	repo = r.Data["repositories"].([]any)[0].(map[string]any)
	if repo["status"] != "damaged" || !strings.Contains(fmt.Sprint(repo["error"]), "administrator") {
		t.Fatalf("maintenance of a broken ref: %s", r.raw)
	}
	if strings.Contains(r.raw, e.base) {
		t.Fatalf("host path in maintenance data: %s", r.raw)
	}
}

// TestExecGitStatusSeesLazilySavedIndex: commits save the git index lazily (core/vcs), so
// shed_exec git flushes it first: right after several writes, `git status` is clean.
func TestExecGitStatusSeesLazilySavedIndex(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	for i := range 5 {
		wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": fmt.Sprintf("s/%d.txt", i), "content": "x"}, nil))
		wantOK(t, e.post("shed_patch_text", map[string]any{"zone": "documents", "path": "s/0.txt", "content": fmt.Sprint(i)}, nil))
	}
	r := e.post("shed_exec", map[string]any{"zone": "documents", "cmd": "git", "args": []string{"status", "--porcelain"}}, nil)
	wantOK(t, r)
	if r.Data["returncode"] != 0.0 || r.Data["stdout"] != "" {
		t.Fatalf("git status after writes: %v", r.Data)
	}
}
