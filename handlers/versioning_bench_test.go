package handlers_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// versionedFiles is the size of the Documents zone issue 5's targets are set for.
const versionedFiles = 10_000

// BenchmarkVersioning is issue 5's performance target at the service level: a Documents
// zone with 10,000 tracked files (100 folders of 100), served over loopback HTTP with the
// small launcher, against the git CLI on a copy (cp -a) of the same work tree and
// repository. Each iteration runs, interleaved:
//
//   - patch-fileshed: shed_patch_text appending a line (write + commit of that path);
//     patch-git: the same append, then `git add <file>` and `git commit -q`;
//   - exec-fileshed: shed_exec `sed -i '$a x' <file>` (command + change detection + quota
//   - commit); exec-git: the same sed, then `git add -A` and `git commit -q`;
//   - read-fileshed: shed_exec `cat <file>` in the same zone, the launcher's share (a
//     reader runs with the zone read-only: no walk, no lock, no commit).
//
// It reports every p50/p99 and patch-ratio and exec-ratio (fileshed p50 / CLI p50;
// targets ≤ 1.5 and ≤ 2). Run:
//
//	go test -run '^$' -bench BenchmarkVersioning -benchtime 100x ./handlers/
func BenchmarkVersioning(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git CLI not installed")
	}
	buildLauncher(b)
	e := start(b, nil)
	space := filepath.Join(e.base, "users/local/Documents")
	for i := range versionedFiles {
		e.write(fmt.Sprintf("users/local/Documents/data/d%02d/f%04d.txt", i%100, i), fmt.Sprintf("line %d\n", i))
	}
	// The first writing command commits all 10,000 files.
	execute := poster(b, e, "shed_exec")
	execute(`{"zone":"documents","cmd":"touch","args":["seeded.txt"]}`)
	cli := b.TempDir()
	for _, d := range []string{"data", "repo.git"} {
		if out, err := exec.Command("cp", "-a", filepath.Join(space, d), filepath.Join(cli, d)).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v %s", err, out)
		}
	}
	work, home := filepath.Join(cli, "data"), b.TempDir()
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir = work
		cmd.Env = []string{"GIT_DIR=" + filepath.Join(cli, "repo.git"), "GIT_WORK_TREE=" + work,
			"GIT_CONFIG_NOSYSTEM=1", "HOME=" + home, "PATH=" + os.Getenv("PATH"), "LC_ALL=C",
			"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=b@x", "GIT_COMMITTER_NAME=fileshed", "GIT_COMMITTER_EMAIL=f@x"}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s %v: %v %s", name, args, err, out)
		}
	}
	run("git", "update-index", "--refresh", "-q") // cp -a changed every inode: refresh git's stat cache once
	patch := poster(b, e, "shed_patch_text")
	ops := []timed{
		{"patch-fileshed", func(int) { patch(`{"zone":"documents","path":"d07/f0007.txt","content":"x\n"}`) }},
		{"patch-git", func(int) {
			f, err := os.OpenFile(filepath.Join(work, "d07/f0007.txt"), os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				_, err = f.WriteString("x\n")
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				b.Fatal(err)
			}
			run("git", "add", "d07/f0007.txt")
			run("git", "commit", "-q", "-m", "shed_patch_text: d07/f0007.txt")
		}},
		{"exec-fileshed", func(int) { execute(`{"zone":"documents","cmd":"sed","args":["-i","$a x","d08/f0008.txt"]}`) }},
		{"exec-git", func(int) {
			run("sed", "-i", "$a x", "d08/f0008.txt")
			run("git", "add", "-A")
			run("git", "commit", "-q", "-m", "shed_exec: sed -i $a x d08/f0008.txt")
		}},
		{"read-fileshed", func(int) { execute(`{"zone":"documents","cmd":"cat","args":["d09/f0009.txt"]}`) }},
	}
	for i := range 3 { // warm up: connections, page cache, both stat caches
		for _, op := range ops {
			op.call(i)
		}
	}
	p50 := latencies(b, ops...)
	b.ReportMetric(float64(p50[0])/float64(p50[1]), "patch-ratio")
	b.ReportMetric(float64(p50[2])/float64(p50[3]), "exec-ratio")
}
