package handlers_test

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/sandbox"
)

// BenchmarkExecCat is the round trip of shed_exec cat on a 1 KB file over loopback HTTP
// (real server, launcher, rlimits), with Landlock ("landlock", exec_sandbox=best_effort)
// and without ("off"), both re-executing the (big) test binary as the launcher, then
// with Landlock through the small launcher cmd/fileshed-sandbox built next to the test
// binary ("small-launcher"), reporting p50/p99. BenchmarkTreeEmptyZone is the server's
// floor without a process.
func BenchmarkExecCat(b *testing.B) {
	for _, mode := range []string{"best_effort", "off", "small-launcher"} {
		name := map[string]string{"best_effort": "landlock", "off": "off", "small-launcher": "small-launcher"}[mode]
		b.Run(name, func(b *testing.B) {
			if mode == "small-launcher" {
				buildLauncher(b)
				mode = "best_effort"
			}
			e := start(b, map[string]string{"FILESHED_EXEC_SANDBOX": mode})
			e.write(execDir+"k.txt", strings.Repeat("x", 1023)+"\n")
			post := poster(b, e, "shed_exec")
			call := func(int) { post(`{"zone":"storage","cmd":"cat","args":["k.txt"]}`) }
			call(0)
			latency(b, call)
		})
	}
}

// buildLauncher builds cmd/fileshed-sandbox next to the test binary (where
// core/sandbox looks for it) and removes it when the benchmark ends.
func buildLauncher(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	dst := filepath.Join(filepath.Dir(self), sandbox.LauncherName)
	cmd := osexec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", dst, "../cmd/fileshed-sandbox")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("cannot build the launcher: %v %s", err, out)
	}
	b.Cleanup(func() { os.Remove(dst) })
}

// BenchmarkLaunchCost is issue 18's launch target: the launch cost of shed_exec cat — its
// round trip minus a process-free round trip (shed_tree of an empty zone) — against a bare
// fork+exec of cat from Go (os/exec), all interleaved in one run, with every sandbox layer on
// (Landlock, seccomp, subreaper launcher) through the small launcher. launch-ratio is the
// target (≤ 2). Run:
//
//	FILESHED_SKIP_CATALOGUE=1 go test -run '^$' -bench BenchmarkLaunchCost -benchtime 300x ./handlers/
func BenchmarkLaunchCost(b *testing.B) {
	buildLauncher(b)
	e := start(b, nil)
	e.write(execDir+"k.txt", strings.Repeat("x", 1023)+"\n")
	cat := poster(b, e, "shed_exec")
	tree := poster(b, e, "shed_tree")
	bin, err := osexec.LookPath("cat")
	if err != nil {
		b.Skip("cat not installed (coreutils)")
	}
	file := filepath.Join(e.base, execDir, "k.txt")
	p50 := latencies(b,
		timed{"exec", func(int) { cat(`{"zone":"storage","cmd":"cat","args":["k.txt"]}`) }},
		timed{"tree", func(int) { tree(`{"zone":"documents"}`) }},
		timed{"bare", func(int) {
			if err := osexec.Command(bin, file).Run(); err != nil {
				b.Fatal(err)
			}
		}})
	b.ReportMetric(float64(p50[0]-p50[1])/float64(p50[2]), "launch-ratio")
}
