package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitIgnoresUserWrittenConfig: the zone's own .git/config (written by the user,
// with an fsmonitor and a pager that would run commands) is never read, because
// the git directory lives outside the zone; git status does not rewrite the index.
func TestGitIgnoresUserWrittenConfig(t *testing.T) {
	t.Parallel()
	d := zone(t)
	gitDir := filepath.Join(t.TempDir(), "repo.git")
	setup := func(args ...string) {
		cmd := exec.Command("git", append([]string{"--git-dir=" + gitDir, "--work-tree=" + d}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	setup("init", "-q")
	setup("add", "a.txt")
	setup("commit", "-q", "-m", "first")
	write(t, filepath.Join(d, ".git", "config"), "[core]\n\tfsmonitor = touch pwned-fsmonitor\n\tpager = touch pwned-pager\n[diff]\n\texternal = touch-pwned\n")
	write(t, filepath.Join(d, "a.txt"), "changed\n")
	index := filepath.Join(gitDir, "index")
	before, _ := os.Stat(index)
	for _, args := range [][]string{{"status"}, {"log", "--format=%an | %s"}, {"diff"}, {"grep", "changed"}, {"show", "HEAD:a.txt"}} {
		t.Run(args[0], func(t *testing.T) {
			c, err := Prepare(Request{Cmd: "git", Args: args, Kind: ReadWrite, Confine: confineIn(d)})
			if err != nil {
				t.Fatal(err)
			}
			s := spec(d, c.Argv...)
			s.Exec, s.ExtraRO = c.Exec, []string{gitDir}
			s.Env = append(BuildEnv(d), GitEnv(gitDir, d)...)
			res, err := Run(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 || strings.Contains(res.Stdout+res.Stderr, d) && args[0] != "status" {
				t.Fatalf("%+v", res)
			}
			for _, p := range []string{"pwned-fsmonitor", "pwned-pager"} {
				assertAbsent(t, filepath.Join(d, p))
			}
		})
	}
	after, _ := os.Stat(index)
	if !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("git status rewrote the index")
	}
}
