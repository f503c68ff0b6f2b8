package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fileshed/fileshed/bench/internal/pdfgen"
)

// words make the corpus's filler lines (none holds a planted query's words).
var words = strings.Fields("the of and to in is was for on that with as by at from report figures " +
	"service request user file line value table index order price total month year north south " +
	"east west green blue river stone paper window garden market letter number system config")

// writeCorpus writes files text files of about total bytes under dir (100 folders): lines of
// filler words, and, spread evenly, 60 lines holding the literal query and 60 the regex's
// match. It answers the number of planted lines.
func writeCorpus(dir string, files int, total int64) (int, error) {
	if err := os.RemoveAll(dir); err != nil {
		return 0, err
	}
	per := max(total/int64(files), 64)
	seed := uint32(1)
	next := func() uint32 { seed = seed*1664525 + 1013904223; return seed >> 8 }
	planted, every := 0, max(files/60, 1)
	var b bytes.Buffer
	for i := range files {
		b.Reset()
		for int64(b.Len()) < per {
			for w := 0; w < 12; w++ {
				b.WriteString(words[next()%uint32(len(words))])
				b.WriteByte(' ')
			}
			b.WriteByte('\n')
		}
		if i%every == 0 && planted < 120 {
			fmt.Fprintf(&b, "trip notes: Zanzibar Quokka sighting %d\nconnection refused after %d ms\n", i, 100+i%900)
			planted += 2
		}
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%06d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return 0, err
		}
		if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
			return 0, err
		}
	}
	return planted, nil
}

// rgCount runs rg and counts the lines it prints (exit 1: none found).
func rgCount(ctx context.Context, rg string, args []string) (int, error) {
	cmd := exec.CommandContext(ctx, rg, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	n := 0
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		n++
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return 0, nil
	}
	return n, err
}

// client calls a fileshed server (auth mode none: user local).
type client struct{ url string }

// search calls shed_search and answers its matches; an answer cut in pages is an error (the
// benchmark's queries must fit one).
func (c *client) search(ctx context.Context, body map[string]any) (int, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/shed_search", bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var env struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
		Message string `json:"message"`
		Data    struct {
			Matches   int  `json:"matches"`
			Truncated bool `json:"truncated"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return 0, err
	}
	if !env.Success || env.Data.Truncated {
		return 0, fmt.Errorf("%s: %s", env.Error, env.Message)
	}
	return env.Data.Matches, nil
}

// server is a fileshed process on a fresh storage directory.
type server struct {
	cmd       *exec.Cmd
	url, base string
}

// startServer starts bin on loopback (auth mode none; a command timeout that lets a first
// search extract hundreds of PDFs).
func startServer(bin string) (*server, error) {
	base, err := os.MkdirTemp("", "search-bench-")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--listen", addr, "--storage-base-path", base)
	cmd.Env = append(os.Environ(), "FILESHED_AUTH_MODE=none", "FILESHED_LOG_LEVEL=warn", "FILESHED_EXEC_TIMEOUT_DEFAULT=240")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, url: "http://" + addr, base: base}
	for range 200 {
		if resp, err := http.Get(s.url + "/healthz"); err == nil {
			resp.Body.Close()
			return s, nil
		}
		time.Sleep(50 * time.Millisecond) // polling a process's start: no event to wait on
	}
	s.stop()
	return nil, errors.New("the server did not start")
}

func (s *server) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	_ = os.RemoveAll(s.base)
}

// pdfRun writes o.pdf PDFs (and their text, by pdftotext, as .txt files), fills the cache
// with a first search, then compares a second search of the PDFs with a search of the texts.
func pdfRun(ctx context.Context, stdout, stderr io.Writer, c *client, data string, o options) bool {
	pdftotext, err := exec.LookPath("pdftotext")
	if err != nil {
		fmt.Fprintln(stderr, "pdftotext not found: apt-get install poppler-utils")
		return false
	}
	pdfs, texts := filepath.Join(data, "bench-search-pdf"), filepath.Join(data, "bench-search-pdftext")
	for _, d := range []string{pdfs, texts} {
		if err := os.RemoveAll(d); err != nil || os.MkdirAll(d, 0o700) != nil {
			fmt.Fprintln(stderr, "cannot prepare", d)
			return false
		}
	}
	for i := range o.pdf {
		p := filepath.Join(pdfs, fmt.Sprintf("r%05d.pdf", i))
		if err := os.WriteFile(p, benchPDF(i), 0o600); err != nil {
			fmt.Fprintln(stderr, err)
			return false
		}
		txt := filepath.Join(texts, fmt.Sprintf("r%05d.txt", i))
		if out, err := exec.CommandContext(ctx, pdftotext, "-enc", "UTF-8", p, txt).CombinedOutput(); err != nil {
			fmt.Fprintf(stderr, "pdftotext: %v %s\n", err, out)
			return false
		}
	}
	search := func(dir string) func() (int, error) {
		return func() (int, error) {
			return c.search(ctx, map[string]any{"query": "zanzibar quokka", "zone": "storage", "path": dir})
		}
	}
	t0 := time.Now()
	if _, err := search("bench-search-pdf")(); err != nil {
		fmt.Fprintln(stderr, "first PDF search:", err)
		return false
	}
	fmt.Fprintf(stdout, "%d PDFs: first search (extraction) %.1f s\n", o.pdf, time.Since(t0).Seconds())
	return compare(ctx, stdout, stderr, "pdf", "texts", "pdfs (cached)", o.rounds, search("bench-search-pdftext"), search("bench-search-pdf"))
}

// benchPDF is a two-page PDF of filler lines; every tenth holds the literal query.
func benchPDF(i int) []byte {
	objs := []string{"<</Type/Catalog/Pages 2 0 R>>", "", "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>"}
	var kids []string
	for p := range 2 {
		var c strings.Builder
		c.WriteString("BT /F1 11 Tf 72 740 Td 13 TL\n")
		for l := range 40 {
			text := fmt.Sprintf("document %d page %d line %d: %s %s %s", i, p+1, l+1, words[(i+l)%len(words)], words[(i*7+l)%len(words)], words[l%len(words)])
			if i%10 == 0 && p == 1 && l == 20 {
				text = "sighted a zanzibar quokka here"
			}
			fmt.Fprintf(&c, "(%s) '\n", text)
		}
		c.WriteString("ET")
		objs = append(objs, fmt.Sprintf("<</Length %d>>stream\n%s\nendstream", c.Len(), c.String()))
		objs = append(objs, fmt.Sprintf("<</Type/Page/Parent 2 0 R/Contents %d 0 R>>", len(objs)))
		kids = append(kids, fmt.Sprintf("%d 0 R", len(objs)))
	}
	objs[1] = fmt.Sprintf("<</Type/Pages/Kids[%s]/Count 2/MediaBox[0 0 612 792]/Resources<</Font<</F1 3 0 R>>>>>>", strings.Join(kids, " "))
	return pdfgen.Render(objs)
}
