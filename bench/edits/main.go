package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

//go:embed testdata
var testdata embed.FS

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

// run is main without the exit: 0 when every attempt ran, 1 when one could not, 2 on a
// usage error. The table goes to stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("edits", flag.ContinueOnError)
	fl.SetOutput(stderr)
	base := fl.String("url", "http://127.0.0.1:8000", "a running fileshed (loopback only; auth mode none)")
	files := fl.Int("files", 0, "use only the first N corpus files (0: all)")
	per := fl.Int("per", 2, "attempts per file and scenario")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	u, err := url.Parse(*base)
	if err != nil || !loopback(u.Hostname()) {
		fmt.Fprintln(stderr, "edits: -url must be a loopback address")
		return 2
	}
	corpus, names, err := load(*files)
	if err != nil {
		fmt.Fprintln(stderr, "edits:", err)
		return 1
	}
	attempts := plan(corpus, names, *per)
	c := &client{url: strings.TrimSuffix(*base, "/"), http: &http.Client{Timeout: time.Minute}}
	t := table{}
	for _, m := range modes {
		for _, a := range attempts {
			if ctx.Err() != nil {
				return 1
			}
			o, err := c.run(a, m)
			if err != nil {
				fmt.Fprintln(stderr, "edits:", err)
				return 1
			}
			t.add(m, a.kind, o)
		}
	}
	fmt.Fprintf(stdout, "%d files, %d attempts per addressing mode (%d scenarios x %d), %d calls of shed_patch_text\n\n",
		len(names), len(attempts), len(scenarios), *per, len(attempts)*len(modes))
	t.print(stdout)
	return 0
}

// loopback reports whether host is a loopback name or address.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// load reads the corpus (the first n files by name; 0 = all).
func load(n int) (map[string][]byte, []string, error) {
	entries, err := fs.ReadDir(testdata, "testdata")
	if err != nil {
		return nil, nil, err
	}
	corpus := map[string][]byte{}
	var names []string
	for _, e := range entries {
		b, err := testdata.ReadFile(path.Join("testdata", e.Name()))
		if err != nil {
			return nil, nil, err
		}
		corpus[e.Name()] = b
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if n > 0 && n < len(names) {
		names = names[:n]
	}
	if len(names) == 0 {
		return nil, nil, errors.New("empty corpus")
	}
	return corpus, names, nil
}

// table counts outcomes by mode and scenario.
type table map[string]map[string]map[string]int

func (t table) add(mode, kind, outcome string) {
	if t[mode] == nil {
		t[mode] = map[string]map[string]int{}
	}
	if t[mode][kind] == nil {
		t[mode][kind] = map[string]int{}
	}
	t[mode][kind][outcome]++
}

// total is mode's count of outcome over every scenario.
func (t table) total(mode, outcome string) int {
	n := 0
	for _, k := range t[mode] {
		n += k[outcome]
	}
	return n
}

// print writes the summary by mode, then each mode's scenarios, as Markdown tables.
func (t table) print(w io.Writer) {
	fmt.Fprintf(w, "| addressing | %s |\n|%s\n", strings.Join(outcomes, " | "), strings.Repeat(" --- |", len(outcomes)+1))
	for _, m := range modes {
		fmt.Fprintf(w, "| %s |", m)
		for _, o := range outcomes {
			fmt.Fprintf(w, " %d |", t.total(m, o))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n| scenario | %s |\n|%s\n", strings.Join(modes, " | "), strings.Repeat(" --- |", len(modes)+1))
	for _, k := range scenarios {
		fmt.Fprintf(w, "| %s |", k)
		for _, m := range modes {
			var parts []string
			for i, o := range outcomes {
				if n := t[m][k][o]; n > 0 {
					parts = append(parts, fmt.Sprintf("%d %s", n, short[i]))
				}
			}
			fmt.Fprintf(w, " %s |", strings.Join(parts, ", "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n(%s)\n", legend())
}

// short are the outcomes' abbreviations in the scenario table.
var short = []string{"ok", "refused+fix", "refused", "wrong+warned", "WRONG"}

func legend() string {
	var parts []string
	for i, o := range outcomes {
		parts = append(parts, short[i]+": "+o)
	}
	return strings.Join(parts, "; ")
}
