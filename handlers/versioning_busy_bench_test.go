package handlers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
)

// benchSeconds is how long the sustained-load benchmarks run: FILESHED_BENCH_SECONDS, or
// def seconds.
func benchSeconds(def int) time.Duration {
	if n, err := strconv.Atoi(os.Getenv("FILESHED_BENCH_SECONDS")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return time.Duration(def) * time.Second
}

// BenchmarkBusyDocuments is issue 18's busy zone: one user, 16 concurrent clients appending
// a unique line to 4 shared Documents files for a while. It reports commits per second and
// the append p50/p99, then checks that nothing was lost: every acknowledged line is in its
// file, every call made its own commit, and git fsck is clean. Run:
//
//	FILESHED_BENCH_SECONDS=30 go test -run '^$' -bench BenchmarkBusyDocuments -benchtime 1x ./handlers/
func BenchmarkBusyDocuments(b *testing.B) {
	const clients, files = 16, 4
	for b.Loop() {
		e := start(b, nil)
		for f := range files {
			e.write(fmt.Sprintf("users/local/Documents/data/shared/%d.txt", f), "")
		}
		poster(b, e, "shed_exec")(`{"zone":"documents","cmd":"touch","args":["seed"]}`) // first commit of the seeds
		stop := time.Now().Add(benchSeconds(10))
		var mu sync.Mutex
		var lat []time.Duration
		acked := map[int][]string{}
		var wg sync.WaitGroup
		start := time.Now()
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{}
				for n := 0; time.Now().Before(stop); n++ {
					f, line := (c+n)%files, fmt.Sprintf("c%02d-%06d", c, n)
					body, _ := json.Marshal(map[string]any{"zone": "documents", "path": fmt.Sprintf("shared/%d.txt", f), "content": line + "\n"})
					t0 := time.Now()
					resp, err := client.Post(e.srv.URL+"/shed_patch_text", "application/json", strings.NewReader(string(body)))
					if err != nil {
						b.Error(err)
						return
					}
					raw, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					d := time.Since(t0)
					if !strings.Contains(string(raw), `"success":true`) {
						b.Errorf("append: %s", raw)
						return
					}
					mu.Lock()
					lat = append(lat, d)
					acked[f] = append(acked[f], line)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		b.StopTimer()
		total := 0
		for f := range files {
			got, err := os.ReadFile(filepath.Join(e.base, fmt.Sprintf("users/local/Documents/data/shared/%d.txt", f)))
			if err != nil {
				b.Fatal(err)
			}
			have := map[string]bool{}
			for _, l := range strings.Split(strings.TrimSpace(string(got)), "\n") {
				have[l] = true
			}
			for _, l := range acked[f] {
				if !have[l] {
					b.Fatalf("lost write: %s in shared/%d.txt", l, f)
				}
			}
			total += len(acked[f])
		}
		commits, _ := strconv.Atoi(git(b, e, "rev-list", "--count", "HEAD"))
		if commits != total+1 {
			b.Fatalf("%d commits for %d acknowledged appends (+1 seed)", commits, total)
		}
		git(b, e, "fsck", "--strict", "--no-dangling")
		slices.Sort(lat)
		b.ReportMetric(float64(total)/elapsed.Seconds(), "commits/s")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.StartTimer()
	}
}

// BenchmarkFirstWriteAfterRestart is issue 18's restart target: a Storage zone of 100,000
// files (FILESHED_BENCH_FILES to change), the server restarted on the same storage; the
// first shed_patch_text after the restart against the p50 of the writes that follow
// (first-ratio; target ≤ 10), after a clean stop and after a crash (the running marker left
// behind, so the start-up sweep also reconciles every owner in the background). Run:
//
//	go test -run '^$' -bench BenchmarkFirstWriteAfterRestart -benchtime 3x ./handlers/
func BenchmarkFirstWriteAfterRestart(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("FILESHED_BENCH_FILES")); err == nil && v > 0 {
		n = v
	}
	cfg := config(b, nil)
	for i := range n {
		p := filepath.Join(cfg.StorageBasePath, fmt.Sprintf("users/local/Storage/data/d%03d/f%06d.txt", i%1000, i))
		if i < 1000 {
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	for _, crashed := range []bool{false, true} {
		name := "clean"
		if crashed {
			name = "after-crash"
		}
		b.Run(name, func(b *testing.B) { firstWrites(b, cfg, crashed) })
	}
}

// firstWrites restarts the server on cfg's storage b.N times and reports the first write's
// time against the p50 of the next 30.
func firstWrites(b *testing.B, cfg *valves.Config, crashed bool) {
	var firsts, normals []time.Duration
	for b.Loop() {
		if crashed {
			if err := os.WriteFile(filepath.Join(cfg.StorageBasePath, ".fileshed-running"), nil, 0o600); err != nil {
				b.Fatal(err)
			}
		}
		h, _, svc, err := handlers.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(h)
		e := &env{t: b, srv: srv, base: cfg.StorageBasePath, cfg: cfg}
		post := poster(b, e, "shed_patch_text")
		body := `{"zone":"storage","path":"log.txt","content":"x\n"}`
		t0 := time.Now()
		post(body)
		firsts = append(firsts, time.Since(t0))
		var lat []time.Duration
		for range 30 {
			t0 = time.Now()
			post(body)
			lat = append(lat, time.Since(t0))
		}
		slices.Sort(lat)
		normals = append(normals, lat[len(lat)/2])
		srv.Close()
		svc.Close()
	}
	slices.Sort(firsts)
	slices.Sort(normals)
	f, w := firsts[len(firsts)/2], normals[len(normals)/2]
	b.ReportMetric(float64(f.Microseconds())/1000, "first-ms")
	b.ReportMetric(float64(w.Microseconds())/1000, "write-p50-ms")
	b.ReportMetric(float64(f)/float64(w), "first-ratio")
}
