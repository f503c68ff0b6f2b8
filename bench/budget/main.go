// Command budget measures what the command budget bounds (issue 24 items 3 and 13) on a
// built server: 30 parallel shed_read of a PDF by one user (the server's peak RSS, VmHWM,
// the peak RSS of the server with every process it started, and the most poppler processes
// at once), and shed_exec ls with timeout=1 in an encrypted Storage of 20,000 files (the
// call's wall time). Run it against two builds to compare them:
//
//	go build -o /tmp/new/fileshed . && go build -o /tmp/new/fileshed-sandbox ./cmd/fileshed-sandbox
//	go run ./bench/budget -bin /tmp/new/fileshed
//
// It needs poppler-utils. It never imports the server: any build with the same tools works.
package main

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fileshed/fileshed/bench/internal/pdfgen"
)

func main() {
	bin := flag.String("bin", "", "the fileshed binary to measure (its fileshed-sandbox beside it)")
	timeout := flag.Int("pdf-timeout", 10, "exec_timeout_default of the PDF runs, in seconds")
	files := flag.Int("files", 20000, "files in the encrypted Storage of the ls run")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "usage: budget -bin path/to/fileshed")
		os.Exit(2)
	}
	vars := []string{"FILESHED_EXEC_TIMEOUT_DEFAULT=" + strconv.Itoa(*timeout)}
	for _, c := range []struct {
		name string
		pdf  []byte
	}{{"normal PDF (40 text pages)", textPDF(40)}, {"hostile PDF (nested form XObjects, 2 KB)", nestedForms(6, 10)}} {
		s := start(*bin, vars)
		s.write("x.pdf", c.pdf)
		stop := s.sample()
		t0 := time.Now()
		codes := parallel(30, func() string { return s.post("shed_read", `{"zone":"storage","path":"x.pdf"}`) })
		took := time.Since(t0)
		tree, poppler := stop()
		fmt.Printf("%s: 30 parallel shed_read in %.1f s, answers %v; server VmHWM %d MB, peak RSS of the server and its children %d MB, at most %d poppler processes\n",
			c.name, took.Seconds(), codes, s.status("VmHWM")>>10, tree>>10, poppler)
		s.stop()
	}
	s := start(*bin, []string{"FILESHED_ENCRYPTION_MASTER_KEY=budget-bench-master-key-0123456789abcdef"})
	s.post("shed_encryption", `{"action":"setup"}`)
	s.post("shed_create_file", `{"zone":"storage","path":"seed.txt","content":"some content\n"}`)
	raw, err := os.ReadFile(filepath.Join(s.data, "seed.txt"))
	check(err)
	for i := range *files { // copies of one encrypted file: a file's key does not depend on its name
		s.write(fmt.Sprintf("d%02d/f%05d.txt", i%20, i), raw)
	}
	for _, args := range []string{`[]`, `["d00/f00000.txt"]`} {
		t0 := time.Now()
		code := s.post("shed_exec", `{"zone":"storage","cmd":"ls","args":`+args+`,"timeout":1}`)
		left, _ := filepath.Glob(filepath.Join(s.base, ".plain", "m-*"))
		fmt.Printf("encrypted Storage of %d files: ls %s with timeout=1 answered %s in %.2f s, %d decrypted copies left\n",
			*files, args, code, time.Since(t0).Seconds(), len(left))
	}
	s.stop()
}

// server is one fileshed process on a fresh storage directory (auth mode none: user local).
type server struct {
	cmd              *exec.Cmd
	addr, base, data string
}

func start(bin string, vars []string) *server {
	base, err := os.MkdirTemp("", "budget-bench-")
	check(err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--listen", addr, "--storage-base-path", base)
	cmd.Env = append(os.Environ(), append(vars, "FILESHED_AUTH_MODE=none", "FILESHED_LOG_LEVEL=warn")...)
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	s := &server{cmd: cmd, addr: addr, base: base, data: filepath.Join(base, "users", "local", "Storage", "data")}
	for range 200 {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	panic("the server did not start")
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
	_ = os.RemoveAll(s.base)
}

// write puts a file into user local's Storage directly on disk.
func (s *server) write(rel string, b []byte) {
	p := filepath.Join(s.data, rel)
	check(os.MkdirAll(filepath.Dir(p), 0o700))
	check(os.WriteFile(p, b, 0o600))
}

// post calls a tool and answers its error code ("OK" on success).
func (s *server) post(tool, body string) string {
	resp, err := http.Post("http://"+s.addr+"/"+tool, "application/json", strings.NewReader(body))
	check(err)
	defer resp.Body.Close()
	var env struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}
	check(json.NewDecoder(resp.Body).Decode(&env))
	if env.Success {
		return "OK"
	}
	return env.Error
}

// status reads a "kB" field of the server's /proc status, in kB.
func (s *server) status(field string) int {
	return statusKB(s.cmd.Process.Pid, field)
}

func statusKB(pid int, field string) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// sample follows, every 20 ms until stop, the summed RSS of the server and its
// descendants, and how many poppler processes run; stop answers both peaks (kB, count).
func (s *server) sample() (stop func() (treeKB, poppler int)) {
	done, finished := make(chan struct{}), make(chan struct{})
	var peakKB, peakProcs int
	go func() {
		defer close(finished)
		for {
			kb, procs := s.tree()
			peakKB, peakProcs = max(peakKB, kb), max(peakProcs, procs)
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() (int, int) {
		close(done)
		<-finished
		return peakKB, peakProcs
	}
}

// tree sums VmRSS over the server and its descendants and counts pdftotext/pdfinfo among them.
func (s *server) tree() (kb, poppler int) {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := bytes.LastIndexByte(b, ')'); err == nil && i > 0 {
			if f := strings.Fields(string(b[i+1:])); len(f) > 2 {
				parent[pid], _ = strconv.Atoi(f[1])
			}
		}
	}
	root := s.cmd.Process.Pid
	for pid := range parent {
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				kb += statusKB(pid, "VmRSS")
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
				if c := strings.TrimSpace(string(comm)); c == "pdftotext" || c == "pdfinfo" {
					poppler++
				}
				break
			}
		}
	}
	return kb, poppler
}

// parallel runs call n times at once and counts the answers.
func parallel(n int, call func() string) map[string]int {
	var mu sync.Mutex
	codes := map[string]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			c := call()
			mu.Lock()
			codes[c]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return codes
}

// textPDF is n pages of about 1,500 characters each.
func textPDF(n int) []byte {
	objs := []string{"<</Type/Catalog/Pages 2 0 R>>", "", "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>"}
	var kids []string
	for p := range n {
		var c strings.Builder
		c.WriteString("BT /F1 11 Tf 72 740 Td 13 TL\n")
		for l := range 30 {
			fmt.Fprintf(&c, "(Page %d line %d: the quarterly report, figures and notes) ' \n", p+1, l+1)
		}
		c.WriteString("ET")
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		_, _ = w.Write([]byte(c.String()))
		_ = w.Close()
		objs = append(objs, fmt.Sprintf("<</Length %d/Filter/FlateDecode>>stream\n%s\nendstream", z.Len(), z.Bytes()))
		objs = append(objs, fmt.Sprintf("<</Type/Page/Parent 2 0 R/Contents %d 0 R>>", len(objs)))
		kids = append(kids, fmt.Sprintf("%d 0 R", len(objs)))
	}
	objs[1] = fmt.Sprintf("<</Type/Pages/Kids[%s]/Count %d/MediaBox[0 0 612 792]/Resources<</Font<</F1 3 0 R>>>>>>", strings.Join(kids, " "), n)
	return pdfgen.Render(objs)
}

// nestedForms is the hostile PDF of issue 24: levels of form XObjects, each drawing the one
// below fan times, over a form showing text; pdftotext's memory grows without end.
func nestedForms(levels, fan int) []byte {
	objs := []string{"<</Type/Catalog/Pages 2 0 R>>", "", "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>"}
	form := func(body, res string) int {
		objs = append(objs, fmt.Sprintf("<</Type/XObject/Subtype/Form/BBox[0 0 612 792]/Resources<<%s>>/Length %d>>stream\n%s\nendstream", res, len(body), body))
		return len(objs)
	}
	draws := strings.TrimSpace(strings.Repeat("/X Do ", fan))
	x := form("BT /F1 12 Tf 72 720 Td (a b c d e f g h i j k l m n o p q r s t u v w x y z) Tj ET", "/Font<</F1 3 0 R>>")
	for range levels {
		x = form(draws, fmt.Sprintf("/XObject<</X %d 0 R>>", x))
	}
	objs = append(objs, fmt.Sprintf("<</Length %d>>stream\n%s\nendstream", len(draws), draws))
	objs = append(objs, fmt.Sprintf("<</Type/Page/Parent 2 0 R/Contents %d 0 R/Resources<</XObject<</X %d 0 R>>>>>>", len(objs), x))
	objs[1] = fmt.Sprintf("<</Type/Pages/Kids[%d 0 R]/Count 1/MediaBox[0 0 612 792]>>", len(objs))
	return pdfgen.Render(objs)
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
