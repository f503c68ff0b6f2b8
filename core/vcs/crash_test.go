package vcs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv selects the subprocess mode of TestMain.
const helperEnv = "VCS_TEST_HELPER"

// TestMain doubles as the crash subject: with VCS_TEST_HELPER=commit-loop
// the test binary commits in a loop until it is killed.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "commit-loop" {
		commitLoop(os.Getenv("VCS_GITDIR"), os.Getenv("VCS_WORK"))
		return
	}
	os.Exit(m.Run())
}

// commitLoop writes and commits forever, printing one line per commit.
func commitLoop(gitDir, work string) {
	r, err := Open(gitDir, work)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		name := fmt.Sprintf("f%02d.txt", i%40)
		if err := os.WriteFile(filepath.Join(work, name), []byte(strings.Repeat(fmt.Sprint(i), 2000)), 0o600); err != nil {
			fmt.Println("write:", err)
			os.Exit(2)
		}
		if i%3 == 0 {
			_, err = r.CommitAll(Signature{Name: "loop"}, "all")
		} else {
			_, err = r.CommitPaths([]string{name}, Signature{Name: "loop"}, "one")
		}
		if err != nil {
			fmt.Println("commit:", err)
			os.Exit(2)
		}
		fmt.Println("ok")
	}
}

// TestKill9MidCommit kills a committing process with SIGKILL at varying
// moments, then checks that the repository opens, verifies, commits and
// passes git fsck.
func TestKill9MidCommit(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	for i := 0; i < 200; i++ {
		z.write(t, fmt.Sprintf("pad/p%03d.txt", i), fmt.Sprint(i))
	}
	for round := 0; round < 8; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=commit-loop", "VCS_GITDIR="+z.gitDir, "VCS_WORK="+z.work)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		for n := 0; n < 5+round*3 && sc.Scan(); n++ {
			if sc.Text() != "ok" {
				t.Fatalf("helper: %s", sc.Text())
			}
		}
		time.Sleep(time.Duration(round*700) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()

		r, err := Open(z.gitDir, z.work)
		if err != nil {
			t.Fatalf("round %d: Open after kill -9: %v", round, err)
		}
		recoverRepo(t, r)
		if err := r.Verify(); err != nil {
			t.Fatalf("round %d: Verify after Open: %v", round, err)
		}
		z.write(t, "after.txt", fmt.Sprint(round))
		if h, err := r.CommitPaths([]string{"after.txt"}, alice, "after"); err != nil || h == "" {
			t.Fatalf("round %d: commit after kill -9: %q %v", round, h, err)
		}
		if _, err := r.CommitAll(alice, "sweep"); err != nil {
			t.Fatalf("round %d: CommitAll: %v", round, err)
		}
		if h, err := r.CommitAll(alice, "again"); err != nil || h != "" {
			t.Fatalf("round %d: work tree not clean after sweep: %q %v", round, h, err)
		}
		_ = r.Close()
		if _, err := exec.LookPath("git"); err == nil {
			z.gitCLI(t, "fsck", "--strict", "--no-dangling")
			if st := z.gitCLI(t, "status", "--porcelain"); st != "" {
				t.Fatalf("round %d: git status not clean:\n%s", round, st)
			}
		}
	}
}

// recoverRepo runs Recover under the repository lock, as core does at its first lock.
func recoverRepo(t *testing.T, r *Repo) RepairReport {
	t.Helper()
	l, err := r.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	rep, err := l.Recover()
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	return rep
}

// TestOpenLeavesAnotherHostsLiveLocks: a lock file may belong to a live writer of another
// host sharing the volume (whose flock this host does not see), so Open removes none and
// writes nothing; Recover, which the holder of the cross-host authority runs, removes them
// and the next commit works.
func TestOpenLeavesAnotherHostsLiveLocks(t *testing.T) {
	t.Parallel()
	for _, lock := range []string{"index.lock", "HEAD.lock", "refs/heads/main.lock", "config.lock", "objects/" + tmpObjPrefix + "123"} {
		t.Run(lock, func(t *testing.T) {
			z := newZone(t)
			z.write(t, "a.txt", "a")
			r := z.open(t)
			if _, err := r.CommitAll(alice, "base"); err != nil {
				t.Fatal(err)
			}
			_ = r.Close()
			if err := os.WriteFile(filepath.Join(z.gitDir, lock), []byte("another host writing"), 0o600); err != nil {
				t.Fatal(err)
			}
			r = z.open(t)
			if got, err := os.ReadFile(filepath.Join(z.gitDir, lock)); err != nil || string(got) != "another host writing" {
				t.Fatalf("Open touched %s: %q %v", lock, got, err)
			}
			rep := recoverRepo(t, r)
			if len(rep.RemovedLocks) != 1 || rep.RemovedLocks[0] != lock {
				t.Fatalf("Recover removed %v, want [%s]", rep.RemovedLocks, lock)
			}
			z.write(t, "a.txt", "b")
			if h, err := r.CommitPaths([]string{"a.txt"}, alice, "next"); err != nil || h == "" {
				t.Fatalf("commit after recovery: %q %v", h, err)
			}
		})
	}
}

func TestStaleLockReportedByVerifyAndRemovedByRepair(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	z.write(t, "a.txt", "a")
	r := z.open(t)
	if _, err := r.CommitAll(alice, "base"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(z.gitDir, "index.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(); !errors.Is(err, ErrBusy) {
		t.Fatalf("Verify = %v, want ErrBusy", err)
	}
	z.write(t, "a.txt", "b")
	if _, err := r.CommitPaths([]string{"a.txt"}, alice, "blocked"); !errors.Is(err, ErrBusy) {
		t.Fatalf("commit with index.lock = %v, want ErrBusy", err)
	}
	rep, err := r.Repair()
	if err != nil || len(rep.RemovedLocks) != 1 || rep.RemovedLocks[0] != "index.lock" {
		t.Fatalf("Repair = %+v, %v", rep, err)
	}
	if h, err := r.CommitPaths([]string{"a.txt"}, alice, "after repair"); err != nil || h == "" {
		t.Fatalf("commit after Repair: %q %v", h, err)
	}
	if got := headFiles(t, r)["a.txt"]; got != "b" {
		t.Fatalf("a.txt = %q", got)
	}
}

func TestRepairRebuildsCorruptIndex(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		corrupt func(t *testing.T, path string)
	}{
		{"truncated", func(t *testing.T, p string) {
			if err := os.Truncate(p, 100); err != nil {
				t.Fatal(err)
			}
		}},
		{"garbage", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte("DIRC garbage that is not an index"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"bad checksum", func(t *testing.T, p string) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)-1] ^= 0xff
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing", func(t *testing.T, p string) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}},
		{"empty", func(t *testing.T, p string) {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			z := newZone(t)
			z.write(t, "a.txt", "a")
			z.write(t, "d/b.txt", "b")
			r := z.open(t)
			if _, err := r.CommitAll(alice, "base"); err != nil {
				t.Fatal(err)
			}
			tc.corrupt(t, filepath.Join(z.gitDir, "index"))
			if err := r.Verify(); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Verify = %v, want ErrCorrupt", err)
			}
			rep, err := r.Repair()
			if err != nil || !rep.IndexRebuilt {
				t.Fatalf("Repair = %+v, %v", rep, err)
			}
			if err := r.Verify(); err != nil {
				t.Fatalf("Verify after Repair: %v", err)
			}
			if h, err := r.CommitAll(alice, "nothing"); err != nil || h != "" {
				t.Fatalf("rebuilt index shows changes: %q %v", h, err)
			}
			z.write(t, "d/b.txt", "B")
			if h, err := r.CommitAll(alice, "change"); err != nil || h == "" {
				t.Fatalf("commit after Repair: %q %v", h, err)
			}
		})
	}
}

// TestOpenRebuildsIndexBehindHead simulates a crash after the branch moved
// and before the index was saved: the old index must not make the next
// commit revert the last one.
func TestOpenRebuildsIndexBehindHead(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	z.write(t, "a.txt", "1")
	z.write(t, "b.txt", "1")
	r := z.open(t)
	if _, err := r.CommitAll(alice, "one"); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(filepath.Join(z.gitDir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	z.write(t, "a.txt", "2")
	if _, err := r.CommitPaths([]string{"a.txt"}, alice, "two"); err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	if err := os.WriteFile(filepath.Join(z.gitDir, "index"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	r = z.open(t)
	z.write(t, "b.txt", "2")
	if _, err := r.CommitPaths([]string{"b.txt"}, alice, "three"); err != nil {
		t.Fatal(err)
	}
	if got := headFiles(t, r); got["a.txt"] != "2" || got["b.txt"] != "2" {
		t.Fatalf("HEAD = %v", got)
	}
}

func TestCorruptHeadIsReportedNotPanic(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, file, content string }{
		{"empty branch ref", "refs/heads/main", ""},
		{"garbage branch ref", "refs/heads/main", "not a hash\n"},
		{"missing commit", "refs/heads/main", strings.Repeat("ab", 20) + "\n"},
		{"detached HEAD garbage", "HEAD", "garbage\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			z := newZone(t)
			z.write(t, "a.txt", "a")
			r := z.open(t)
			if _, err := r.CommitAll(alice, "base"); err != nil {
				t.Fatal(err)
			}
			_ = r.Close()
			if err := os.WriteFile(filepath.Join(z.gitDir, tc.file), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(z.gitDir, z.work)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open = %v, want ErrCorrupt", err)
			}
			if strings.Contains(err.Error(), z.gitDir) {
				t.Fatalf("error leaks host path: %v", err)
			}
		})
	}
}
