package main

import (
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
	"strings"
	"time"

	"github.com/fileshed/fileshed/bench/internal/loadgen"
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
		fmt.Fprintf(stdout, "seeded %d files in zone %s (%d errors, FILE_EXISTS counts as seeded) in %s\n", st.Count, cfg.zone, st.Errors, st.Elapsed.Round(time.Millisecond))
		if st.Errors > 0 {
			fmt.Fprintln(stderr, "load: seeding failed:", st.FirstErr)
			return 1
		}
	}
	st := hammer(ctx, client, cfg, cfg.tool, cfg.n, func(int) []byte { return cfg.body })
	st.Print(stdout, cfg.tool)
	if st.Errors > 0 {
		fmt.Fprintln(stderr, "load: first error:", st.FirstErr)
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

// hammer sends n requests to tool from cfg.c workers and times each one.
func hammer(ctx context.Context, client *http.Client, cfg *config, tool string, n int, body func(i int) []byte) loadgen.Stats {
	return loadgen.Hammer(ctx, cfg.c, n, time.Time{}, func(_, i int) error {
		a, err := loadgen.Call(ctx, client, cfg.url.String()+"/"+tool, body(i), cfg.headers)
		if err != nil && tool == "shed_create_file" && a.Error == "FILE_EXISTS" {
			return nil // seeding: a second run reuses the files
		}
		return err
	})
}
