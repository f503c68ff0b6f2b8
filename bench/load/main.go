package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of the flags: the tool must stop by itself in reasonable time.
const (
	maxRequests    = 1_000_000
	maxConcurrency = 256
	maxFiles       = 1_000_000
)

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

// headers is the repeatable -header k=v flag.
type headers map[string]string

func (h headers) String() string { return fmt.Sprint(map[string]string(h)) }

func (h headers) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return errors.New("want key=value")
	}
	h[strings.TrimSpace(k)] = val
	return nil
}

// config is the parsed command line.
type config struct {
	url     *url.URL
	tool    string
	body    []byte
	n, c    int
	files   int
	zone    string
	headers headers
	timeout time.Duration
}

// run is main without the exit: it returns 0 when every request succeeded, 1 when some
// failed, 2 on a usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parse(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "load:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: cfg.c}}
	if cfg.files > 0 {
		st := hammer(ctx, client, cfg, "shed_create_file", cfg.files, func(i int) []byte {
			b, _ := json.Marshal(map[string]string{"zone": cfg.zone, "path": fmt.Sprintf("load-seed/%d/f%d.txt", i/1000, i), "content": "seed\n"})
			return b
		})
		fmt.Fprintf(stdout, "seeded %d files in zone %s (%d errors, FILE_EXISTS counts as seeded) in %s\n", st.count, cfg.zone, st.errors, st.elapsed.Round(time.Millisecond))
		if st.errors > 0 {
			fmt.Fprintln(stderr, "load: seeding failed:", st.firstErr)
			return 1
		}
	}
	st := hammer(ctx, client, cfg, cfg.tool, cfg.n, func(int) []byte { return cfg.body })
	st.print(stdout, cfg.tool)
	if st.errors > 0 {
		fmt.Fprintln(stderr, "load: first error:", st.firstErr)
		return 1
	}
	return 0
}

// parse reads and checks the flags.
func parse(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{headers: headers{}}
	rawURL := fs.String("url", "http://127.0.0.1:8000", "fileshed base URL (loopback only)")
	fs.StringVar(&cfg.tool, "tool", "shed_tree", "tool to call, e.g. shed_tree (POST /<tool>)")
	body := fs.String("body", `{"zone":"storage"}`, "JSON request body")
	fs.IntVar(&cfg.n, "n", 1000, fmt.Sprintf("requests (1..%d)", maxRequests))
	fs.IntVar(&cfg.c, "c", 1, fmt.Sprintf("concurrent requests (1..%d)", maxConcurrency))
	fs.IntVar(&cfg.files, "files", 0, fmt.Sprintf("first seed this many files with shed_create_file (0..%d)", maxFiles))
	fs.StringVar(&cfg.zone, "zone", "storage", "zone the -files seed goes to")
	fs.DurationVar(&cfg.timeout, "timeout", 30*time.Minute, "stop everything after this long")
	fs.Var(cfg.headers, "header", "request header key=value (repeatable), e.g. Authorization=Bearer ...")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	u, err := loopback(*rawURL)
	if err != nil {
		return nil, err
	}
	cfg.url = u
	switch {
	case cfg.n < 1 || cfg.n > maxRequests:
		return nil, fmt.Errorf("-n must be 1..%d", maxRequests)
	case cfg.c < 1 || cfg.c > maxConcurrency:
		return nil, fmt.Errorf("-c must be 1..%d", maxConcurrency)
	case cfg.files < 0 || cfg.files > maxFiles:
		return nil, fmt.Errorf("-files must be 0..%d", maxFiles)
	case cfg.timeout <= 0:
		return nil, errors.New("-timeout must be positive")
	case !json.Valid([]byte(*body)):
		return nil, errors.New("-body is not valid JSON")
	case cfg.tool == "" || strings.ContainsAny(cfg.tool, "/?#% "):
		return nil, fmt.Errorf("-tool %q is not a tool name", cfg.tool)
	}
	cfg.body = []byte(*body)
	return cfg, nil
}

// loopback parses the base URL and refuses any host that is not a loopback address
// (names other than localhost are refused: they could resolve anywhere).
func loopback(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("-url %q: want http(s)://127.0.0.1:port", raw)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("-url %q: only loopback hosts (127.0.0.0/8, ::1, localhost) are allowed", raw)
	}
	u.Path, u.RawQuery, u.Fragment = strings.TrimSuffix(u.Path, "/"), "", ""
	return u, nil
}

// stats is what one series of requests measured.
type stats struct {
	count, errors int
	lat           []time.Duration // sorted
	elapsed       time.Duration
	firstErr      string
}

// hammer sends n requests to tool from cfg.c workers and times each one.
func hammer(ctx context.Context, client *http.Client, cfg *config, tool string, n int, body func(i int) []byte) stats {
	var next atomic.Int64
	var mu sync.Mutex
	st := stats{lat: make([]time.Duration, 0, n)}
	var wg sync.WaitGroup
	t0 := time.Now()
	for range min(cfg.c, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				s := time.Now()
				err := call(ctx, client, cfg, tool, body(i))
				d := time.Since(s)
				mu.Lock()
				st.count++
				st.lat = append(st.lat, d)
				if err != nil {
					st.errors++
					if st.firstErr == "" {
						st.firstErr = err.Error()
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	st.elapsed = time.Since(t0)
	slices.Sort(st.lat)
	return st
}

// call makes one request; an error is a transport failure, a non-200 status or
// success:false (FILE_EXISTS while seeding counts as success: a second run reuses files).
func call(ctx context.Context, client *http.Client, cfg *config, tool string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.url.String()+"/"+tool, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range cfg.headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	var env struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}
	_ = json.Unmarshal(raw, &env)
	if (resp.StatusCode == http.StatusOK && env.Success) || (tool == "shed_create_file" && env.Error == "FILE_EXISTS") {
		return nil
	}
	return fmt.Errorf("status %d: %.200s", resp.StatusCode, raw)
}

// print writes the summary, one "name value" per line.
func (st stats) print(w io.Writer, tool string) {
	pct := func(p int) time.Duration {
		if len(st.lat) == 0 {
			return 0
		}
		return st.lat[min(len(st.lat)-1, len(st.lat)*p/100)]
	}
	fmt.Fprintf(w, "tool %s\ncount %d\nerrors %d\n", tool, st.count, st.errors)
	for _, p := range []int{50, 90, 99} {
		fmt.Fprintf(w, "p%d %s\n", p, pct(p).Round(time.Microsecond))
	}
	fmt.Fprintf(w, "max %s\n", pct(100).Round(time.Microsecond))
	fmt.Fprintf(w, "elapsed %s\nthroughput %.1f req/s\n", st.elapsed.Round(time.Millisecond), float64(st.count)/max(st.elapsed.Seconds(), 1e-9))
}
