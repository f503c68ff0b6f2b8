package vcs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// benchFiles is the size of the repository the targets are set for.
const benchFiles = 10_000

// benchZone builds a zone with benchFiles tracked files in 100 directories,
// committed once, plus a copy of work tree and git directory for the CLI.
func benchZone(b *testing.B) (z, cli zone) {
	b.Helper()
	z = newZone(b)
	for i := 0; i < benchFiles; i++ {
		z.write(b, fmt.Sprintf("d%02d/f%04d.txt", i%100, i), fmt.Sprintf("line %d\n", i))
	}
	r := z.open(b)
	if _, err := r.CommitAll(Signature{Name: "bench"}, "init"); err != nil {
		b.Fatal(err)
	}
	_ = r.Close()
	root := b.TempDir()
	cli = zone{work: filepath.Join(root, "data"), gitDir: filepath.Join(root, "repo.git")}
	for _, p := range [][2]string{{z.work, cli.work}, {z.gitDir, cli.gitDir}} {
		if out, err := exec.Command("cp", "-a", p[0], p[1]).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v %s", err, out)
		}
	}
	return z, cli
}

// runGit runs the git CLI on the copy with the usual author environment.
func runGit(b *testing.B, z zone, home string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = z.work
	cmd.Env = []string{"GIT_DIR=" + z.gitDir, "GIT_WORK_TREE=" + z.work, "GIT_CONFIG_NOSYSTEM=1",
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=b@x",
		"GIT_COMMITTER_NAME=fileshed", "GIT_COMMITTER_EMAIL=f@x"}
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v %s", args, err, out)
	}
}

// measure runs op once per iteration and reports the median as p50-ms.
func measure(b *testing.B, op func(i int)) {
	var d []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		op(i)
		d = append(d, time.Since(start))
		i++
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
}

// BenchmarkCommit compares, on a 10,000-file repository, (write one file +
// CommitPaths) with `git add <file> && git commit -q`, and (write one file
// + CommitAll) with `git add -A && git commit -q`, the CLI running on a copy
// of the same repository. Run: go test -run '^$' -bench BenchmarkCommit
// -benchtime 50x ./core/vcs/
func BenchmarkCommit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git CLI not installed")
	}
	z, cli := benchZone(b)
	home := b.TempDir()
	r := z.open(b)
	who := Signature{Name: "bench", Email: "b@x"}
	b.Run("paths/fileshed", func(b *testing.B) {
		measure(b, func(i int) {
			z.write(b, "d07/f0007.txt", fmt.Sprintf("paths %d\n", i))
			if h, err := r.CommitPaths([]string{"d07/f0007.txt"}, who, "shed_patch_text: d07/f0007.txt"); err != nil || h == "" {
				b.Fatal(h, err)
			}
		})
	})
	b.Run("paths/git-cli", func(b *testing.B) {
		measure(b, func(i int) {
			cli.write(b, "d07/f0007.txt", fmt.Sprintf("paths %d\n", i))
			runGit(b, cli, home, "add", "d07/f0007.txt")
			runGit(b, cli, home, "commit", "-q", "-m", "shed_patch_text: d07/f0007.txt")
		})
	})
	b.Run("all/fileshed", func(b *testing.B) {
		measure(b, func(i int) {
			z.write(b, "d08/f0008.txt", fmt.Sprintf("all %d\n", i))
			if h, err := r.CommitAll(who, "shed_exec"); err != nil || h == "" {
				b.Fatal(h, err)
			}
		})
	})
	b.Run("all/git-cli", func(b *testing.B) {
		measure(b, func(i int) {
			cli.write(b, "d08/f0008.txt", fmt.Sprintf("all %d\n", i))
			runGit(b, cli, home, "add", "-A")
			runGit(b, cli, home, "commit", "-q", "-m", "shed_exec")
		})
	})
}

// BenchmarkBulkCommit compares committing 10,000 new files (what appears after a command
// that unpacks or generates files) with CommitAll against `git add -A && git commit -q` on
// a copy of the same tree. Each iteration starts from a fresh repository with one commit;
// only the commit is timed.
// Run: go test -run '^$' -bench BenchmarkBulkCommit -benchtime 3x ./core/vcs/
func BenchmarkBulkCommit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git CLI not installed (Debian package git)")
	}
	fresh := func(b *testing.B) (zone, zone) {
		z := newZone(b)
		z.write(b, "README", "init\n")
		r := z.open(b)
		if _, err := r.CommitAll(Signature{Name: "bench"}, "init"); err != nil {
			b.Fatal(err)
		}
		_ = r.Close()
		for i := 0; i < benchFiles; i++ {
			z.write(b, fmt.Sprintf("n%02d/f%04d.txt", i%100, i), fmt.Sprintf("new line %d\n", i))
		}
		root := b.TempDir()
		cli := zone{work: filepath.Join(root, "data"), gitDir: filepath.Join(root, "repo.git")}
		for _, p := range [][2]string{{z.work, cli.work}, {z.gitDir, cli.gitDir}} {
			if out, err := exec.Command("cp", "-a", p[0], p[1]).CombinedOutput(); err != nil {
				b.Fatalf("cp: %v %s", err, out)
			}
		}
		return z, cli
	}
	home := b.TempDir()
	var ours, theirs []time.Duration
	for b.Loop() {
		b.StopTimer()
		z, cli := fresh(b)
		r := z.open(b)
		b.StartTimer()
		start := time.Now()
		if h, err := r.CommitAll(Signature{Name: "bench"}, "shed_exec"); err != nil || h == "" {
			b.Fatal(h, err)
		}
		ours = append(ours, time.Since(start))
		start = time.Now()
		runGit(b, cli, home, "add", "-A")
		runGit(b, cli, home, "commit", "-q", "-m", "shed_exec")
		theirs = append(theirs, time.Since(start))
		_ = r.Close()
	}
	slices.Sort(ours)
	slices.Sort(theirs)
	o, t := ours[len(ours)/2], theirs[len(theirs)/2]
	b.ReportMetric(float64(o.Microseconds())/1000, "fileshed-p50-ms")
	b.ReportMetric(float64(t.Microseconds())/1000, "git-p50-ms")
	b.ReportMetric(float64(o)/float64(t), "ratio")
}

// BenchmarkWritersTakingTurns: on a 10,000-file repository, one file written and committed
// (CommitPaths) by one Repo alone, against two Repos on the same repository committing in
// turn — what replicas sharing a Documents zone do. Each turn finds HEAD moved by the other
// and brings its cache forward by the difference (advance); it used to reload and rebuild
// the whole index. Run: go test -run '^$' -bench BenchmarkWritersTakingTurns -benchtime 200x ./core/vcs/
func BenchmarkWritersTakingTurns(b *testing.B) {
	z, _ := benchZone(b)
	who := Signature{Name: "bench", Email: "b@x"}
	commit := func(b *testing.B, r *Repo, i int) {
		p := fmt.Sprintf("d%02d/f%04d.txt", i%100, i%benchFiles)
		z.write(b, p, fmt.Sprintf("%s %d\n", b.Name(), i))
		if h, err := r.CommitPaths([]string{p}, who, "shed_patch_text: "+p); err != nil || h == "" {
			b.Fatal(h, err)
		}
	}
	one := z.open(b)
	b.Run("one-writer", func(b *testing.B) { measure(b, func(i int) { commit(b, one, i) }) })
	two := []*Repo{z.open(b), z.open(b)}
	b.Run("two-in-turn", func(b *testing.B) { measure(b, func(i int) { commit(b, two[i%2], i) }) })
}
