package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkRunCat measures Run of cat on a 1 KB file: "landlock" is the full
// kernel layer, "launcher" the same launcher without Landlock (exec_sandbox=off),
// "direct" a plain os/exec for the launcher's own overhead.
func BenchmarkRunCat(b *testing.B) {
	d, _ := filepath.EvalSymlinks(b.TempDir())
	os.WriteFile(filepath.Join(d, "k.txt"), []byte(strings.Repeat("x", 1023)+"\n"), 0o600)
	for _, mode := range []Mode{ModeBestEffort, ModeOff} {
		name := map[Mode]string{ModeBestEffort: "landlock", ModeOff: "launcher"}[mode]
		b.Run(name, func(b *testing.B) {
			s := spec(d, "/usr/bin/cat", "k.txt")
			s.Mode = mode
			for b.Loop() {
				if res, err := Run(context.Background(), s); err != nil || len(res.Stdout) != 1024 {
					b.Fatal(err, res)
				}
			}
		})
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("/usr/bin/cat", "k.txt")
			cmd.Dir, cmd.Env = d, BuildEnv(d)
			if out, err := cmd.Output(); err != nil || len(out) != 1024 {
				b.Fatal(err)
			}
		}
	})
}
