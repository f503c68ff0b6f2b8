package handlers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/internal/testtool"
)

// Issue 24, item 9: a member's command in a group zone used to hold the repository lock and
// the zone's gate for its whole run, so another member's shed_create_file waited behind it
// (23.6 s behind a 25 s command). These tests run a command and write beside it.

// waitRunning waits until a process works in dir: the command of a shed_exec in that zone
// has started, so whatever the call does before the run (locks, measures) is done.
func waitRunning(t testing.TB, dir string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
		for _, p := range cwds {
			if l, err := os.Readlink(p); err == nil && l == dir {
				return
			}
		}
	}
	t.Fatal("the command did not start")
}

// slowSQLite is the shed_exec arguments of sqlite3 on db counting to n first (about a second
// per 5 million here), then running then: a command that writes only after a while.
func slowSQLite(db string, n int, then string) map[string]any {
	return map[string]any{"cmd": "sqlite3", "timeout": 120, "args": []string{db,
		fmt.Sprintf("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<%d) SELECT count(*) FROM c;", n) + then}}
}

// teamDir is the team's data directory.
func (g *groupEnv) teamDir() string { return filepath.Join(g.base, "groups", "team", "data") }

// authors maps each path of the team's history to the author of the last commit that
// touched it, and each commit's subject to the paths it touched, read with git through
// shed_exec.
func (g *groupEnv) authors() (byPath map[string]string, bySubject map[string][]string) {
	g.t.Helper()
	r := g.as("carol", "shed_exec", in(map[string]any{"cmd": "git", "args": []string{"log", "--format=@%an@%s", "--name-only"}}))
	wantOK(g.t, r)
	byPath, bySubject = map[string]string{}, map[string][]string{}
	var author, subject string
	for _, line := range strings.Split(r.Data["stdout"].(string), "\n") {
		if rest, ok := strings.CutPrefix(line, "@"); ok {
			author, subject, _ = strings.Cut(rest, "@")
			continue
		}
		if line == "" {
			continue
		}
		if _, seen := byPath[line]; !seen {
			byPath[line] = author
		}
		bySubject[subject] = append(bySubject[subject], line)
	}
	return byPath, bySubject
}

// usageMatchesDisk fails unless the team's recorded usage is the size of its files.
func (g *groupEnv) usageMatchesDisk() {
	g.t.Helper()
	st := g.as("alice", "shed_group_info", map[string]any{"group": "team"})
	wantOK(g.t, st)
	used := int64(st.Data["quota"].(map[string]any)["used_bytes"].(float64))
	if disk := groupDiskAt(g.t, g.base, "team"); used != disk {
		g.t.Fatalf("usage %d, on disk %d (files, history, working copies)", used, disk)
	}
}

// groupDiskAt is what the quota counts of the group's space in the storage base: its
// files, its history and its working copies (bytes).
func groupDiskAt(t *testing.T, base, group string) int64 {
	t.Helper()
	space := filepath.Join(base, "groups", group)
	return testtool.RegularSize(t, filepath.Join(space, "data")) + historyAt(t, space) +
		testtool.RegularSize(t, filepath.Join(space, "editzone"))
}

// TestGroupCommandDoesNotFreezeTheGroup: while alice's command runs (sleep 3), bob's
// shed_create_file answers at once, each file is committed under bob, and alice's commit
// after the command holds only what her command wrote (its stdout_file): bob's files are
// neither re-committed under her name nor reverted.
func TestGroupCommandDoesNotFreezeTheGroup(t *testing.T) {
	g := startGroups(t, nil)
	g.create("alice", "a.md", "a\n", "")
	done := make(chan reply, 1)
	go func() {
		done <- g.as("alice", "shed_exec", in(map[string]any{"cmd": "sleep", "args": []string{"3"}, "stdout_file": "alice.out"}))
	}()
	waitRunning(t, g.teamDir())
	var took []time.Duration
	var r reply
	for i := 0; ; i++ {
		select {
		case r = <-done:
		default:
			t0 := time.Now()
			wantOK(t, g.as("bob", "shed_create_file", in(map[string]any{"path": fmt.Sprintf("bob/%d.md", i), "content": fmt.Sprintf("bob %d\n", i)})))
			took = append(took, time.Since(t0))
			time.Sleep(50 * time.Millisecond)
			continue
		}
		break
	}
	wantOK(t, r)
	slices.Sort(took)
	t.Logf("%d writes during the command: median %v, max %v", len(took), took[len(took)/2], took[len(took)-1])
	if len(took) < 3 || took[len(took)-1] > time.Second {
		t.Fatalf("bob's writes during alice's command took %v", took)
	}
	byPath, bySubject := g.authors()
	for i := range took {
		p := fmt.Sprintf("bob/%d.md", i)
		g.wantFile(p, fmt.Sprintf("bob %d\n", i))
		if byPath[p] != "bob" {
			t.Errorf("%s committed by %q", p, byPath[p])
		}
	}
	if byPath["alice.out"] != "alice" || !slices.Equal(bySubject["shed_exec: sleep 3"], []string{"alice.out"}) {
		t.Errorf("alice's commit: %v (alice.out by %q)", bySubject["shed_exec: sleep 3"], byPath["alice.out"])
	}
	g.usageMatchesDisk()
}

// TestGroupGuardSeesWritesDuringCommand: the ownership guard judges the command against
// what other members committed while it ran. bob edits his own protected files and creates
// one during alice's command: the one alice's command does not touch is not reported nor
// rewritten; the two it overwrites at its end (its stdout_file and stderr_file) are put back
// as bob last wrote them — the new one included, which did not exist when the command started.
func TestGroupGuardSeesWritesDuringCommand(t *testing.T) {
	t.Parallel() // owns its server; waits more than it computes (issue 34)
	g := startGroups(t, nil)
	g.create("bob", "b.md", "v1\n", "owner")
	g.create("bob", "keep.md", "k1\n", "owner")
	done := make(chan reply, 1)
	go func() {
		done <- g.as("alice", "shed_exec", in(map[string]any{"cmd": "sleep", "args": []string{"2"},
			"stdout_file": "b.md", "stderr_file": "new.md"}))
	}()
	waitRunning(t, g.teamDir())
	wantOK(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "b.md", "content": "v2\n", "overwrite": true})))
	wantOK(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "keep.md", "content": "k2\n", "overwrite": true})))
	g.create("bob", "new.md", "n1\n", "owner")
	r := <-done
	wantOK(t, r)
	got := reverted(r)
	slices.Sort(got)
	if !slices.Equal(got, []string{"b.md", "new.md"}) {
		t.Fatalf("reverted = %v: %s", got, r.raw)
	}
	g.wantFile("b.md", "v2\n")
	g.wantFile("keep.md", "k2\n")
	g.wantFile("new.md", "n1\n")
	byPath, _ := g.authors()
	for _, p := range []string{"b.md", "keep.md", "new.md"} {
		if byPath[p] != "bob" {
			t.Errorf("%s last committed by %q", p, byPath[p])
		}
	}
	for p, want := range map[string]string{"b.md": "v2\n", "keep.md": "k2\n", "new.md": "n1\n"} {
		h := g.as("carol", "shed_exec", in(map[string]any{"cmd": "git", "args": []string{"show", "HEAD:" + p}}))
		if wantOK(t, h); h.Data["stdout"] != want {
			t.Errorf("HEAD:%s = %q", p, h.Data["stdout"])
		}
	}
	wantError(t, g.as("alice", "shed_patch_text", in(map[string]any{"path": "new.md", "content": "x"})), "FILE_OWNER_ONLY")
	g.usageMatchesDisk()
}

// TestGroupCommandOverQuotaBesideWrites: the quota is still held with writers beside the
// command. bob writes 400 KB while alice's command computes, then the command writes 700 KB:
// each fits the 1 MB quota alone, not together; the command is rolled back
// (QUOTA_EXCEEDED) and the rollback leaves bob's file, which stays committed under his
// name, and the usage equals the disk.
func TestGroupCommandOverQuotaBesideWrites(t *testing.T) {
	t.Parallel() // owns its server; waits more than it computes (issue 34)
	g := startGroups(t, map[string]string{"FILESHED_QUOTA_PER_GROUP_MB": "1"})
	done := make(chan reply, 1)
	go func() {
		done <- g.as("alice", "shed_exec", in(slowSQLite("q.db", 8_000_000, "CREATE TABLE t(b); INSERT INTO t VALUES (zeroblob(700000));")))
	}()
	waitRunning(t, g.teamDir())
	wantOK(t, g.as("bob", "shed_create_file", in(map[string]any{"path": "bob.txt", "content": strings.Repeat("b", 400_000)})))
	wantError(t, <-done, "QUOTA_EXCEEDED")
	g.wantFile("bob.txt", strings.Repeat("b", 400_000))
	if _, ok := g.file("q.db"); ok {
		t.Fatal("the command's database survived its rollback")
	}
	if byPath, _ := g.authors(); byPath["bob.txt"] != "bob" {
		t.Fatalf("bob.txt committed by %q", byPath["bob.txt"])
	}
	g.usageMatchesDisk()
}
