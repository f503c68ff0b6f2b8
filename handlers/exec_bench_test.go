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
