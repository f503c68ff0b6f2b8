package replicas

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fileshed/fileshed/bench/internal/loadgen"
	"github.com/fileshed/fileshed/internal/pgtest"
	"github.com/fileshed/fileshed/internal/replicatest"
)

// The busy-Documents load (issue 18's BenchmarkBusyDocuments, spread over users and
// replicas): clients workers, worker w acting as user w%users; its calls alternate between
// an append to the Documents file its user's clients share (shared.txt) and one to its own
// (own/wNN.txt). Call i goes to replica i%replicas: round robin.
const (
	clients = 16
	users   = 4
	apiKey  = "bench-replicas-api-key"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// line is one acknowledged append: its user, file and text.
type line struct {
	user       int
	file, text string
}

// result is what one load measured and what it had acknowledged.
type result struct {
	replicas int
	stats    loadgen.Stats
	acked    []line
	base     string  // the storage directory
	spent    metrics // what the replicas' /metrics counted during the load, summed
}

// writesPerSec is the acknowledged appends per second.
func (r result) writesPerSec() float64 {
	return float64(r.stats.Count-r.stats.Errors) / max(r.stats.Elapsed.Seconds(), 1e-9)
}

// userHeader is user u's headers (auth.mode headers).
func userHeader(u int) map[string]string {
	return map[string]string{"Authorization": "Bearer " + apiKey, "X-OpenWebUI-User-Id": fmt.Sprintf("u%d", u), "X-OpenWebUI-User-Role": "user"}
}

// runLoad starts n replicas of bin on a new storage directory and a new database, seeds
// each user's Documents (files small files, shared.txt, both committed), runs the load for
// d, and kills the replicas.
func runLoad(t testing.TB, bin string, n, files int, d time.Duration) result {
	t.Helper()
	dir := t.TempDir()
	base := filepath.Join(dir, "storage")
	for u := range users {
		for i := range files {
			p := filepath.Join(base, "users", fmt.Sprintf("u%d", u), "Documents", "data", "seed", fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%05d.txt", i))
			if i < 100 {
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(p, []byte("seed\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	stateURL := pgtest.URL(t)
	rs := make([]*replicatest.Replica, n)
	for i := range rs {
		rs[i] = replicatest.New(t, bin, "FILESHED_STORAGE_BASE_PATH="+base,
			"FILESHED_AUTH_MODE=headers", "FILESHED_AUTH_API_KEY="+apiKey,
			"FILESHED_STATE_DRIVER=postgres", "FILESHED_STATE_URL="+stateURL,
			"FILESHED_ENCRYPTION_WORK_DIR="+filepath.Join(dir, fmt.Sprintf("plain%d", i)))
		rs[i].Start(t)     // one after the other: the first runs the migrations alone
		defer rs[i].Kill() // now, not when t ends: a round's replicas must not load the next
	}
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	ctx := context.Background()
	for u := range users {
		// The second call, a writing command, commits the seed files.
		for _, c := range []struct{ tool, body string }{
			{"shed_create_file", `{"zone":"documents","path":"shared.txt","content":""}`},
			{"shed_exec", `{"zone":"documents","cmd":"touch","args":["seeded"]}`},
		} {
			if _, err := loadgen.Call(ctx, client, rs[0].URL()+"/"+c.tool, []byte(c.body), userHeader(u)); err != nil {
				t.Fatalf("seed: %v", err)
			}
		}
	}
	var mu sync.Mutex
	var acked []line
	before := scrape(t, rs)
	st := loadgen.Hammer(ctx, clients, math.MaxInt32, time.Now().Add(d), func(w, i int) error {
		l := line{user: w % users, file: "shared.txt", text: fmt.Sprintf("w%02d-%07d", w, i)}
		if i%2 == 1 {
			l.file = fmt.Sprintf("own/w%02d.txt", w)
		}
		body, _ := json.Marshal(map[string]any{"zone": "documents", "path": l.file, "content": l.text + "\n"})
		_, err := loadgen.Call(ctx, client, rs[i%n].URL()+"/shed_patch_text", body, userHeader(l.user))
		if err == nil {
			mu.Lock()
			acked = append(acked, l)
			mu.Unlock()
		}
		return err
	})
	return result{replicas: n, stats: st, acked: acked, base: base, spent: scrape(t, rs).minus(before)}
}

// check fails t unless every acknowledged append is in its file and made its own commit.
func (r result) check(t testing.TB) {
	t.Helper()
	commits := make([]int, users)
	files := map[string]map[string]bool{}
	for _, l := range r.acked {
		commits[l.user]++
		p := filepath.Join(r.base, "users", fmt.Sprintf("u%d", l.user), "Documents", "data", l.file)
		if files[p] == nil {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files[p] = map[string]bool{}
			for _, x := range strings.Split(string(b), "\n") {
				files[p][x] = true
			}
		}
		if !files[p][l.text] {
			t.Fatalf("%d replicas: acknowledged append %s lost in u%d's %s", r.replicas, l.text, l.user, l.file)
		}
	}
	for u, want := range commits {
		out, err := exec.Command("git", "--git-dir", filepath.Join(r.base, "users", fmt.Sprintf("u%d", u), "Documents", "repo.git"),
			"rev-list", "--count", "HEAD").CombinedOutput()
		got, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil || got != want+2 { // +2: the seed's commits
			t.Fatalf("%d replicas: user u%d has %s commits for %d acknowledged appends (+2 seeds): %v", r.replicas, u, out, want, err)
		}
	}
}

// log writes the load's figures through logf, and where the replicas' time went per
// acknowledged write: their CPU, and each internal operation's count and mean duration.
func (r result) log(logf func(format string, args ...any)) {
	logf("%d replica(s): %d acknowledged writes in %s: %.1f writes/s, p50 %s, p99 %s, errors %d %s",
		r.replicas, len(r.acked), r.stats.Elapsed.Round(time.Millisecond), r.writesPerSec(),
		r.stats.Pct(50).Round(time.Microsecond), r.stats.Pct(99).Round(time.Microsecond), r.stats.Errors, r.stats.FirstErr)
	w := float64(max(len(r.acked), 1))
	parts := []string{fmt.Sprintf("replicas' CPU %.2f ms", 1000*r.spent["process_cpu_seconds_total"]/w)}
	for _, k := range slices.Sorted(maps.Keys(r.spent)) {
		if op, ok := strings.CutPrefix(k, opCount); ok && r.spent[k] > 0 {
			n := r.spent[k]
			parts = append(parts, fmt.Sprintf("%s %.2f × %.2f ms", strings.Trim(op, `"}`), n/w, 1000*r.spent[opSum+op]/max(n, 1)))
		}
	}
	logf("  per write: %s", strings.Join(parts, ", "))
}

// The series of /metrics that scrape keeps (with the op label's value after the prefix).
const (
	opCount = `fileshed_operation_duration_seconds_count{op=`
	opSum   = `fileshed_operation_duration_seconds_sum{op=`
)

// metrics is a sum over replicas of some /metrics series.
type metrics map[string]float64

// minus is m - o, series by series.
func (m metrics) minus(o metrics) metrics {
	out := metrics{}
	for k, v := range m {
		out[k] = v - o[k]
	}
	return out
}

// scrape sums the replicas' CPU seconds and their internal operations' counts and sums.
func scrape(t testing.TB, rs []*replicatest.Replica) metrics {
	t.Helper()
	m := metrics{}
	for _, r := range rs {
		resp, err := http.Get(r.URL() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(l, " ")
			x, err := strconv.ParseFloat(v, 64)
			if ok && err == nil && (k == "process_cpu_seconds_total" || strings.HasPrefix(k, opCount) || strings.HasPrefix(k, opSum)) {
				m[k] += x
			}
		}
	}
	return m
}

// TestReplicasLoad runs one short round of the benchmark, 1 then 3 replicas, and checks
// that every append was acknowledged and is on disk in its own commit.
func TestReplicasLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs 4 servers")
	}
	bin, err := replicatest.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3} {
		r := runLoad(t, bin, n, 10, time.Second)
		r.log(t.Logf)
		if r.stats.Errors > 0 || len(r.acked) < clients {
			t.Fatalf("%d replicas: %d errors, %d acknowledged writes: %s", n, r.stats.Errors, len(r.acked), r.stats.FirstErr)
		}
		r.check(t)
	}
}

// BenchmarkReplicas runs b.N rounds, each a load on 1 replica and one on 3 (their order
// alternates from one round to the next), prints each round's writes/s, p50, p99 and ratio
// (on stdout: the testing package cuts a benchmark's log to 10 lines), and reports the
// medians (the ratio's range too).
func BenchmarkReplicas(b *testing.B) {
	printf := func(format string, args ...any) { fmt.Printf(format+"\n", args...) }
	bin, err := replicatest.Build(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	d := 20 * time.Second
	if s, err := strconv.Atoi(os.Getenv("FILESHED_BENCH_SECONDS")); err == nil && s > 0 {
		d = time.Duration(s) * time.Second
	}
	files, _ := strconv.Atoi(os.Getenv("FILESHED_BENCH_FILES"))
	var ratios, one, three, p50One, p50Three, p99One, p99Three []float64
	round := 0
	for b.Loop() {
		round++
		order := []int{1, 3}
		if round%2 == 0 {
			order = []int{3, 1}
		}
		got := map[int]result{}
		for _, n := range order {
			r := runLoad(b, bin, n, max(files, 0), d)
			r.check(b)
			r.log(printf)
			got[n] = r
		}
		ratio := got[3].writesPerSec() / got[1].writesPerSec()
		printf("round %d: ratio 3/1 %.2f (load average %s)", round, ratio, loadAverage())
		ratios = append(ratios, ratio)
		one, three = append(one, got[1].writesPerSec()), append(three, got[3].writesPerSec())
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		p50One, p50Three = append(p50One, ms(got[1].stats.Pct(50))), append(p50Three, ms(got[3].stats.Pct(50)))
		p99One, p99Three = append(p99One, ms(got[1].stats.Pct(99))), append(p99Three, ms(got[3].stats.Pct(99)))
	}
	b.ReportMetric(median(ratios), "ratio-median")
	b.ReportMetric(slices.Min(ratios), "ratio-min")
	b.ReportMetric(slices.Max(ratios), "ratio-max")
	b.ReportMetric(median(one), "writes/s-1")
	b.ReportMetric(median(three), "writes/s-3")
	b.ReportMetric(median(p50One), "p50-ms-1")
	b.ReportMetric(median(p50Three), "p50-ms-3")
	b.ReportMetric(median(p99One), "p99-ms-1")
	b.ReportMetric(median(p99Three), "p99-ms-3")
}

// median of xs (not empty).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
