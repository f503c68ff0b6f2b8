package handlers_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKill9BetweenWriteAndCommit (issue 23): the server is killed with SIGKILL while
// shed_create_file writes and commits one Documents file after another, so the kill falls
// anywhere in the write transaction (after the rename, before or during the commit). After
// a restart the first write commits what the kill left uncommitted (under the fileshed author, saying
// why), then its own file, and the zone is consistent: every
// file on disk is in the history as it is on disk, git fsck is clean, no temporary file is
// left, and the recorded usage equals the disk.
func TestKill9BetweenWriteAndCommit(t *testing.T) {
	t.Parallel() // its own binary process, storage and state; it waits on events (issue 34)
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	base := filepath.Join(dir, "data")
	srv := startBinary(t, bin, base)
	// Four writers, so that some write is always inside its transaction at the kill.
	const writers = 4
	done := make(chan int, writers)
	for w := range writers {
		go func() {
			acked := 0
			defer func() { done <- acked }()
			for i := w; i < 4000; i += writers {
				body := fmt.Sprintf(`{"zone":"documents","path":"d/f%04d.txt","content":%q}`, i, strings.Repeat("x", i%300))
				if _, err := srv.call(t, "shed_create_file", []byte(body)); err != nil {
					return // the kill
				}
				acked++
			}
		}()
	}
	docs := filepath.Join(base, documentsDir, "d")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Millisecond) {
		if entries, _ := os.ReadDir(docs); len(entries) >= 30 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the writes did not start")
		}
	}
	must(t, srv.cmd.Process.Kill())
	_ = srv.cmd.Wait()
	acked := 0
	for range writers {
		acked += <-done
	}
	srv = startBinary(t, bin, base)
	if _, err := srv.call(t, "shed_create_file", []byte(`{"zone":"documents","path":"after.txt","content":"after the crash"}`)); err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(base, "users/local/Documents/repo.git")
	work := filepath.Join(base, documentsDir)
	index := filepath.Join(dir, "index") // the CLI's own index: fileshed keeps its own
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"--git-dir", gitDir, "--work-tree", work}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("read-tree", "HEAD")
	run("add", "-A")
	if st := run("diff", "--cached", "--name-status", "HEAD"); st != "" {
		t.Fatalf("after the restart and one write, the zone differs from its history:\n%s", st)
	}
	run("fsck", "--no-progress")
	if log := run("log", "--format=%an|%s"); !strings.Contains(log, "fileshed|fileshed: changes written before an unclean stop") &&
		len(mustReadDir(t, docs)) > acked {
		t.Fatalf("files written before the kill were committed without saying so:\n%s", log)
	}
	entries := mustReadDir(t, docs)
	if len(entries) < acked {
		t.Fatalf("%d files on disk, %d writes acknowledged", len(entries), acked)
	}
	if tmp := tempFiles(base); len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
	if used, disk := usedBytes(t, srv), diskUsageAt(t, base, "local"); used != disk {
		t.Fatalf("recorded usage %d, disk %d", used, disk)
	}
	t.Logf("killed after %d acknowledged writes, %d files on disk", acked, len(entries))
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	entries, err := os.ReadDir(dir)
	must(t, err)
	return entries
}
