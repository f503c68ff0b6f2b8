package handlers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkPatchTextAppend measures a 1 KB shed_patch_text append (position end) in Storage
// over loopback HTTP (real server, real SQLite, fsync'd atomic writes) with 100 and with
// 100,000 files in the zone, and reports the median and the 99th percentile. The quota is
// accounted incrementally, so the zone's size must not matter (the original walked the tree).
// The appends rotate over 100 files so that no file grows large (an atomic append rewrites
// its file).
func BenchmarkPatchTextAppend(b *testing.B) {
	for _, files := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			// The seed is over the default file quota (100,000 names): raised, not measured.
			e := start(b, map[string]string{"FILESHED_QUOTA_FILES_PER_USER": "200000"})
			seed(b, filepath.Join(e.base, storageDir), files)
			post := poster(b, e, "shed_patch_text")
			chunk := strings.Repeat("x", 1023) + `\n`
			call := func(i int) {
				post(`{"zone":"storage","path":"logs/log` + fmt.Sprint(i%100) + `.txt","content":"` + chunk + `"}`)
			}
			for i := range 100 {
				call(i) // warm up: connection, zone sweep, first usage reconcile, the files
			}
			latency(b, call)
		})
	}
}

// seed creates n small files in dir, 1,000 per folder.
func seed(b *testing.B, dir string, n int) {
	b.Helper()
	for i := range n {
		sub := filepath.Join(dir, "seed", fmt.Sprint(i/1000))
		if i%1000 == 0 {
			if err := os.MkdirAll(sub, 0o700); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d.txt", i)), []byte("seed\n"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
}
