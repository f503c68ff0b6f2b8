// Command soak runs the fileshed binary under a realistic mix of N users for a while,
// optionally killing it with SIGKILL at random moments (-crash), and then proves that nothing
// was lost: every acknowledged write is on disk with its last acknowledged content (a write
// cut by a crash may have landed or not, nothing else), and `fileshed admin verify` finds
// every repository, the state database and the quotas consistent. It reports throughput and
// p50/p99 per tool, errors by code, and the server's footprint over time (RSS, live and
// in-use Go heap, open descriptors) with the trend of its second half and a verdict.
//
//	go run ./bench/soak -users 64 -duration 10m
//	go run ./bench/soak -users 16 -duration 3m -crash 20s
//
// It builds the server and its launcher from the module root (or takes -bin), runs them on a
// loopback port with a fresh storage directory, and speaks only HTTP to them.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() { os.Exit(run()) }

func run() int {
	users := flag.Int("users", 64, "simulated users (1..512)")
	duration := flag.Duration("duration", time.Minute, "how long the mix runs")
	crash := flag.Duration("crash", 0, "kill the server with SIGKILL about this often (0 = never)")
	bin := flag.String("bin", "", "fileshed binary (default: build it from the module root)")
	keep := flag.Bool("keep", false, "keep the storage directory for inspection")
	flag.Parse()
	if *users < 1 || *users > 512 || *duration <= 0 || *crash < 0 {
		fmt.Fprintln(os.Stderr, "soak: -users 1..512, -duration > 0, -crash >= 0")
		return 2
	}
	work, err := os.MkdirTemp("", "fileshed-soak-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 2
	}
	if !*keep {
		defer os.RemoveAll(work)
	}
	if *bin == "" {
		if *bin, err = build(work); err != nil {
			fmt.Fprintln(os.Stderr, "soak: build:", err)
			return 2
		}
	}
	s := &server{bin: *bin, base: filepath.Join(work, "data"), key: randomHex(16), log: filepath.Join(work, "server.log")}
	if err := s.start(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 1
	}
	defer s.kill()
	st := newStats()
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	var samples []sample
	var wg sync.WaitGroup
	wg.Go(func() { samples = s.sample(ctx, 5*time.Second) })
	crashes := 0
	if *crash > 0 {
		wg.Go(func() { crashes = s.crashLoop(ctx, *crash) })
	}
	clients := make([]*user, *users)
	for i := range clients {
		clients[i] = newUser(fmt.Sprintf("u%03d", i), s, st)
		wg.Go(func() { clients[i].loop(ctx) })
	}
	wg.Wait()
	s.stop()
	fmt.Printf("soak: %d users, %s, %d crash(es), storage %s\n", *users, *duration, crashes, s.base)
	st.print(*duration)
	flat := printSamples(samples)
	lost := 0
	for _, u := range clients {
		lost += u.verify(s.base)
	}
	fmt.Printf("verify: %d lost or wrong writes\n", lost)
	out, verr := exec.Command(s.bin, "admin", "verify", "--storage-base-path", s.base).CombinedOutput()
	var rep struct {
		Problems int `json:"problems"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || verr != nil || rep.Problems > 0 {
		fmt.Printf("admin verify (%v): %s\n", verr, out)
		verr = fmt.Errorf("admin verify found problems")
	} else {
		fmt.Println("admin verify: every repository, the state database and the quotas check out (0 problems)")
	}
	// Shorter runs are still warming up (caches filling): growth is a failure from 5 minutes.
	grows := !flat && *duration >= 5*time.Minute
	if lost > 0 || verr != nil || st.unexpected() > 0 || grows {
		fmt.Println("soak: FAILED")
		return 1
	}
	fmt.Println("soak: ok")
	return 0
}

// build compiles the server and its launcher into dir.
func build(dir string) (string, error) {
	bin := filepath.Join(dir, "fileshed")
	for pkg, out := range map[string]string{".": bin, "./cmd/fileshed-sandbox": filepath.Join(dir, "fileshed-sandbox")} {
		if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			return "", fmt.Errorf("%v: %s", err, b)
		}
	}
	return bin, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// server is the fileshed process under test; restarts keep its address and storage.
type server struct {
	bin, base, key, log, addr string
	mu                        sync.Mutex
	cmd                       *exec.Cmd
}

func (s *server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addr == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		s.addr = ln.Addr().String()
		ln.Close()
	}
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, "--listen", s.addr, "--storage-base-path", s.base)
	cmd.Env = append(os.Environ(), "FILESHED_AUTH_MODE=headers", "FILESHED_AUTH_API_KEY="+s.key,
		"FILESHED_LOG_LEVEL=warn", "FILESHED_QUOTA_PER_USER_MB=1000")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	for range 200 {
		if resp, err := http.Get("http://" + s.addr + "/healthz"); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("server did not start (log: %s)", s.log)
}

func (s *server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// kill stops the server with SIGKILL and reaps it.
func (s *server) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}

// stop stops the server gracefully.
func (s *server) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		s.cmd.Wait()
		s.cmd = nil
	}
}

// crashLoop kills and restarts the server at random moments around every.
func (s *server) crashLoop(ctx context.Context, every time.Duration) int {
	n := 0
	for {
		wait := every/2 + time.Duration(mrand.Int64N(int64(every)))
		select {
		case <-ctx.Done():
			return n
		case <-time.After(wait):
		}
		s.kill()
		n++
		if err := s.start(); err != nil {
			fmt.Fprintln(os.Stderr, "soak: restart:", err)
			return n
		}
	}
}

// sample is the server's footprint at one moment.
type sample struct {
	at       time.Duration
	rssMB    float64
	inuseMB  float64 // Go heap in use, garbage awaiting the next collection included
	liveMB   float64 // Go heap the last collection found reachable: a leak shows here
	fds      int
	restarts bool
}

// sample records the footprint every interval until ctx ends.
func (s *server) sample(ctx context.Context, every time.Duration) []sample {
	start := time.Now()
	var out []sample
	last := 0
	for {
		pid := s.pid()
		if pid != 0 {
			fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
			m := s.metrics("go_memstats_heap_inuse_bytes", "fileshed_go_heap_live_bytes")
			out = append(out, sample{at: time.Since(start), rssMB: float64(rssKB(pid)) / 1024,
				inuseMB: m[0] / (1 << 20), liveMB: m[1] / (1 << 20), fds: len(fds), restarts: pid != last && last != 0})
			last = pid
		}
		select {
		case <-ctx.Done():
			return out
		case <-time.After(every):
		}
	}
}

// metrics reads the named gauges from the server's /metrics (0 for one it does not answer).
func (s *server) metrics(names ...string) []float64 {
	out := make([]float64, len(names))
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		for i, n := range names {
			if v, ok := strings.CutPrefix(line, n+" "); ok {
				out[i], _ = strconv.ParseFloat(v, 64)
			}
		}
	}
	return out
}

func rssKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// series are the footprint figures the summary follows.
var series = []struct {
	name, unit string
	of         func(sample) float64
}{
	{"RSS", "MB", func(x sample) float64 { return x.rssMB }},
	{"live heap", "MB", func(x sample) float64 { return x.liveMB }},
	{"heap in use", "MB", func(x sample) float64 { return x.inuseMB }},
	{"open fds", "", func(x sample) float64 { return float64(x.fds) }},
}

// flatShare is the verdict's bound: a figure is flat when the trend fitted over the second
// half of the run changes it by less than this share of its mean over that half.
const flatShare = 0.10

// printSamples prints the footprint once a minute (every sample for runs under 2 minutes),
// then, per figure, the slope fitted over the second half of the run and a verdict. It
// returns false when RSS or the live heap still grows (runs with restarts are not judged).
func printSamples(ss []sample) bool {
	if len(ss) == 0 {
		return true
	}
	fmt.Printf("server footprint (%6s %8s %8s %8s %5s):\n", "at", "RSS MB", "live MB", "inuse MB", "fds")
	every := time.Minute
	if ss[len(ss)-1].at < 2*time.Minute {
		every = 0
	}
	next := time.Duration(0)
	for i, x := range ss {
		if x.at < next && i != len(ss)-1 {
			continue
		}
		next = x.at.Truncate(max(every, time.Nanosecond)) + every
		mark := ""
		if x.restarts {
			mark = " (after a restart)"
		}
		fmt.Printf("  %6s %8.1f %8.1f %8.1f %5d%s\n", x.at.Round(time.Second), x.rssMB, x.liveMB, x.inuseMB, x.fds, mark)
	}
	half := ss[len(ss)-1].at / 2
	var second []sample
	restarts := false
	for _, x := range ss {
		restarts = restarts || x.restarts
		if x.at >= half {
			second = append(second, x)
		}
	}
	if restarts || len(second) < 3 {
		fmt.Println("footprint trend: not judged (the server restarted, or too few samples)")
		return true
	}
	flat := true
	fmt.Printf("footprint trend over the second half (%s to %s, least-squares slope):\n", half.Round(time.Second), ss[len(ss)-1].at.Round(time.Second))
	for i, sr := range series {
		slope, mean := trend(second, sr.of)
		change := slope * (second[len(second)-1].at - second[0].at).Minutes()
		verdict := "flat"
		if mean > 0 && change > flatShare*mean {
			verdict = "GROWING"
			if i < 2 {
				flat = false
			}
		}
		fmt.Printf("  %-12s %+8.2f %s/min (mean %.1f %s, trend %+.1f over the half): %s\n", sr.name, slope, sr.unit, mean, sr.unit, change, verdict)
	}
	if flat {
		fmt.Println("footprint: flat (RSS and live heap)")
	} else {
		fmt.Println("footprint: GROWING (RSS or live heap)")
	}
	return flat
}

// trend fits y = a + b·t (t in minutes) over ss by least squares and returns b and the
// mean of y.
func trend(ss []sample, y func(sample) float64) (slope, mean float64) {
	var st, sy, stt, sty float64
	n := float64(len(ss))
	for _, x := range ss {
		t := x.at.Minutes()
		st, sy, stt, sty = st+t, sy+y(x), stt+t*t, sty+t*y(x)
	}
	mean = sy / n
	if d := n*stt - st*st; d != 0 {
		slope = (n*sty - st*sy) / d
	}
	return slope, mean
}

// stats collects latencies per tool and outcomes by code.
type stats struct {
	mu    sync.Mutex
	lat   map[string][]time.Duration
	codes map[string]int
}

func newStats() *stats { return &stats{lat: map[string][]time.Duration{}, codes: map[string]int{}} }

func (st *stats) add(tool, code string, d time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if code == "OK" {
		st.lat[tool] = append(st.lat[tool], d)
	}
	st.codes[tool+" "+code]++
}

// expected are outcomes that are not failures: a call cut by a crash (the server was killed)
// and the domain answers the mix provokes on purpose.
var expected = map[string]bool{"OK": true, "CONNECTION": true, "FILE_NOT_FOUND": true}

func (st *stats) unexpected() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := 0
	for k, v := range st.codes {
		if _, code, _ := strings.Cut(k, " "); !expected[code] {
			n += v
		}
	}
	return n
}

func (st *stats) print(d time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	tools := make([]string, 0, len(st.lat))
	total := 0
	for t, l := range st.lat {
		tools = append(tools, t)
		total += len(l)
	}
	sort.Strings(tools)
	fmt.Printf("%d successful calls, %.0f calls/s\n", total, float64(total)/d.Seconds())
	fmt.Printf("  %-26s %8s %9s %9s\n", "tool", "calls", "p50 ms", "p99 ms")
	for _, t := range tools {
		l := st.lat[t]
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
		fmt.Printf("  %-26s %8d %9.2f %9.2f\n", t, len(l), ms(pct(l, 0.50)), ms(pct(l, 0.99)))
	}
	keys := make([]string, 0, len(st.codes))
	for k := range st.codes {
		if _, code, _ := strings.Cut(k, " "); code != "OK" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	fmt.Println("answers other than OK (tool code: count):")
	for _, k := range keys {
		fmt.Printf("  %s: %d\n", k, st.codes[k])
	}
}

func pct(l []time.Duration, p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	return l[int(math.Min(float64(len(l)-1), p*float64(len(l))))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// discard drains a body so the connection is reused.
func discard(r io.Reader) { io.Copy(io.Discard, r) }
