package core

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkExecQuotaWalk is the cost of one usage walk of a zone after a writing
// shed_exec (two per command): 300 files in 10 folders.
func BenchmarkExecQuotaWalk(b *testing.B) {
	dir := b.TempDir()
	for d := range 10 {
		sub := filepath.Join(dir, fmt.Sprintf("d%d", d))
		if err := os.Mkdir(sub, 0o700); err != nil {
			b.Fatal(err)
		}
		for f := range 30 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d", f)), []byte("0123456789"), 0o600); err != nil {
				b.Fatal(err)
			}
		}
	}
	for b.Loop() {
		if u, err := walkUsage(dir); err != nil || u.Files != 300 {
			b.Fatal(err, u)
		}
	}
}
