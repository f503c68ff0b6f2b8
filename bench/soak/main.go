// Command soak runs the fileshed binary under a realistic mix of N users for a while,
// optionally killing it with SIGKILL at random moments (-crash), and then proves that nothing
// was lost: every acknowledged write is on disk with its last acknowledged content (a write
// cut by a crash may have landed or not, nothing else), and `fileshed admin verify` finds
// every repository, the state database and the quotas consistent. It reports throughput and
// p50/p99 per tool, errors by code, and the server's RSS and open descriptors over time.
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
	printSamples(samples)
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
	if lost > 0 || verr != nil || st.unexpected() > 0 {
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
	rssKB    int
	heapMB   float64 // Go heap in use (from /metrics): tells the runtime's growth from a leak
	fds      int
	restarts bool
}

// sample records RSS and open descriptors every interval until ctx ends.
func (s *server) sample(ctx context.Context, every time.Duration) []sample {
	start := time.Now()
	var out []sample
	last := 0
	for {
		pid := s.pid()
		if pid != 0 {
			fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
			out = append(out, sample{at: time.Since(start), rssKB: rssKB(pid), heapMB: s.heapMB(), fds: len(fds), restarts: pid != last && last != 0})
			last = pid
		}
		select {
		case <-ctx.Done():
			return out
		case <-time.After(every):
		}
	}
}

// heapMB reads go_memstats_heap_inuse_bytes from the server's /metrics (0 if unreachable).
func (s *server) heapMB() float64 {
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f / (1 << 20)
		}
	}
	return 0
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

func printSamples(ss []sample) {
	if len(ss) == 0 {
		return
	}
	fmt.Println("server footprint over time (RSS / Go heap in use / open fds):")
	step := max(1, len(ss)/12)
	for i := 0; i < len(ss); i += step {
		mark := ""
		if ss[i].restarts {
			mark = " (after a restart)"
		}
		fmt.Printf("  %6s  %6.1f MB  %6.1f MB  %4d fds%s\n", ss[i].at.Round(time.Second), float64(ss[i].rssKB)/1024, ss[i].heapMB, ss[i].fds, mark)
	}
	last := ss[len(ss)-1]
	fmt.Printf("  %6s  %6.1f MB  %6.1f MB  %4d fds (last)\n", last.at.Round(time.Second), float64(last.rssKB)/1024, last.heapMB, last.fds)
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
