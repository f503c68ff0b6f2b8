package handlers_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
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
			e := start(b, nil)
			seed(b, filepath.Join(e.base, storageDir), files)
			client := &http.Client{}
			chunk := strings.Repeat("x", 1023) + `\n`
			call := func(i int) {
				body := `{"zone":"storage","path":"logs/log` + fmt.Sprint(i%100) + `.txt","content":"` + chunk + `"}`
				req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/shed_patch_text", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			for i := range 100 {
				call(i) // warm up: connection, zone sweep, first usage reconcile, the files
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				call(i)
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
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
