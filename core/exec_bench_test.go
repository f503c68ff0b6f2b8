package core

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkExecQuotaWalk is the cost of one snapshot of a zone around a writing shed_exec
// (two per command: before and after; tools/commands), beside the plain usage walk of
// shed_stats as the baseline: 10,000 files in 100 folders (the issue 5 target size).
func BenchmarkExecQuotaWalk(b *testing.B) {
	dir := b.TempDir()
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("d%d", d))
		if err := os.Mkdir(sub, 0o700); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d", f)), []byte("0123456789"), 0o600); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("usage-walk", func(b *testing.B) {
		for b.Loop() {
			if u, err := walkUsage(b.Context(), dir, false, false); err != nil || u.Files != 10_100 {
				b.Fatal(err, u)
			}
		}
	})
	b.Run("snapshot", func(b *testing.B) {
		for b.Loop() {
			if s, err := TakeSnapshot(dir); err != nil || len(s.Entries) != 10_100 {
				b.Fatal(err, len(s.Entries))
			}
		}
	})
}
