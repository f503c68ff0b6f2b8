// Command search times shed_search against ripgrep (rg) on the same files (issue 38 item 4):
// a Storage of -files text files making -mb megabytes, one literal and one regex query, warm
// page cache, in alternating rounds (rg then shed_search, then the other way round) so that
// the machine's load moves both alike; it prints each round and the median of each side,
// and checks that both found the same number of lines. With -pdfs N it also times a second
// (cached) search of N PDFs against a search of the same text as .txt files.
//
//	go build -o /tmp/fs/fileshed . && go build -o /tmp/fs/fileshed-sandbox ./cmd/fileshed-sandbox
//	go run ./bench/search -bin /tmp/fs/fileshed -rounds 7 -pdfs 500
//
// rg runs as `rg -i -F -n` (literal) and `rg -i -n` (regex): case-insensitive like
// shed_search's default, all cores (no --sort). The queries match rarely (about 60 lines),
// so both read every file and the answer fits one page. It needs ripgrep (and poppler-utils
// for -pdfs). Where it sits: a standalone tool under bench/; it speaks HTTP to a server it
// starts (-bin) or is given (-url and its -base), and never imports fileshed's packages
// (its test does, to run a server in-process).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// options are the benchmark's flags.
type options struct {
	bin, url, base         string
	files, mb, rounds, pdf int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.bin, "bin", "", "a fileshed binary to start (its fileshed-sandbox beside it)")
	fs.StringVar(&o.url, "url", "", "a running fileshed on loopback (auth mode none), instead of -bin")
	fs.StringVar(&o.base, "base", "", "the running server's storage_base_path (with -url)")
	fs.IntVar(&o.files, "files", 10000, "text files in the corpus")
	fs.IntVar(&o.mb, "mb", 200, "megabytes of text in the corpus")
	fs.IntVar(&o.rounds, "rounds", 5, "alternating rounds")
	fs.IntVar(&o.pdf, "pdfs", 0, "PDFs for the cache comparison (0: none)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (o.bin == "") == (o.url == "" || o.base == "") || o.files < 1 || o.mb < 1 || o.rounds < 1 || o.pdf < 0 {
		fmt.Fprintln(stderr, "usage: search -bin path/to/fileshed | -url http://127.0.0.1:PORT -base DIR [-files N -mb N -rounds N -pdfs N]")
		return 2
	}
	rg, err := exec.LookPath("rg")
	if err != nil {
		fmt.Fprintln(stderr, "rg not found: apt-get install ripgrep")
		return 2
	}
	if o.bin != "" {
		s, err := startServer(o.bin)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		defer s.stop()
		o.url, o.base = s.url, s.base
	}
	c := &client{url: o.url}
	data := filepath.Join(o.base, "users", "local", "Storage", "data")
	corpus := filepath.Join(data, "bench-search")
	t0 := time.Now()
	planted, err := writeCorpus(corpus, o.files, int64(o.mb)<<20)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "corpus: %d files, %d MB, %d planted lines, written in %.1f s\n", o.files, o.mb, planted, time.Since(t0).Seconds())
	failed := false
	for _, q := range queries {
		rgArgs := append(slices.Clone(q.rgFlags), "--", q.query, corpus)
		body := map[string]any{"query": q.query, "regex": q.regex, "zone": "storage", "path": "bench-search"}
		if !compare(ctx, stdout, stderr, q.name, "rg", "shed_search", o.rounds,
			func() (int, error) { return rgCount(ctx, rg, rgArgs) },
			func() (int, error) { return c.search(ctx, body) }) {
			failed = true
		}
	}
	if o.pdf > 0 && !pdfRun(ctx, stdout, stderr, c, data, o) {
		failed = true
	}
	if failed {
		return 1
	}
	return 0
}

// query is one query of the benchmark, with rg's flags for the same meaning.
type query struct {
	name, query string
	regex       bool
	rgFlags     []string
}

// queries are a literal and a regex that match only the planted lines.
var queries = []query{
	{"literal", "zanzibar quokka", false, []string{"-i", "-F", "-n", "--no-messages"}},
	{"regex", `(timeout|refused) after [0-9]+ ?ms`, true, []string{"-i", "-n", "--no-messages"}},
}

// compare times a and b (named la and lb) in alternating rounds, after a warm-up of each,
// checks that they count the same lines, and prints every round, the medians and b/a.
func compare(ctx context.Context, stdout, stderr io.Writer, name, la, lb string, rounds int, a, b func() (int, error)) bool {
	na, err := a()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s: %v\n", name, la, err)
		return false
	}
	nb, err := b()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s: %v\n", name, lb, err)
		return false
	}
	if na != nb || na == 0 {
		fmt.Fprintf(stderr, "%s: %s found %d lines, %s %d\n", name, la, na, lb, nb)
		return false
	}
	var ta, tb []time.Duration
	for r := range rounds {
		first, second, ft, st := a, b, &ta, &tb
		if r%2 == 1 {
			first, second, ft, st = b, a, &tb, &ta
		}
		for _, step := range []struct {
			f func() (int, error)
			t *[]time.Duration
		}{{first, ft}, {second, st}} {
			t0 := time.Now()
			if _, err := step.f(); err != nil || ctx.Err() != nil {
				fmt.Fprintf(stderr, "%s round %d: %v\n", name, r+1, err)
				return false
			}
			*step.t = append(*step.t, time.Since(t0))
		}
		fmt.Fprintf(stdout, "%s round %d: %s %.1f ms, %s %.1f ms, ratio %.2f\n", name, r+1,
			la, ms(ta[r]), lb, ms(tb[r]), float64(tb[r])/float64(ta[r]))
	}
	ma, mb := median(ta), median(tb)
	fmt.Fprintf(stdout, "%s: %d lines; median %s %.1f ms, %s %.1f ms, ratio %.2f\n", name, na, la, ms(ma), lb, ms(mb), float64(mb)/float64(ma))
	return true
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
