package handlers_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchFolder writes the archive benchmark's folder: files of size bytes of text made of
// pseudo-random words (deflate shrinks it about 2.5 times, like source code or logs).
func benchFolder(b *testing.B, dir string, files, size int) {
	words := strings.Fields("the quick brown fox jumps over lazy dog archive zone quota commit entry " +
		"folder write read model user group limit stream bytes header central directory deflate")
	x := uint32(2463534242)
	for i := range files {
		var buf bytes.Buffer
		for buf.Len() < size {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			buf.WriteString(words[x%uint32(len(words))])
			if x%11 == 0 {
				buf.WriteString(strconv.Itoa(int(x % 100000)))
			}
			buf.WriteByte(" \n"[min(x%9, 1)])
		}
		p := filepath.Join(dir, fmt.Sprintf("d%02d/f%04d.txt", i%20, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, buf.Bytes()[:size], 0o600); err != nil {
			b.Fatal(err)
		}
	}
}

// peakRSS runs op after resetting the process's peak resident size (clear_refs 5) and
// returns how far the peak rose above the resident size before op, in MB.
func peakRSS(b *testing.B, op func()) float64 {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
	before := procStatus(b, "self", "VmRSS")
	op()
	return float64(procStatus(b, "self", "VmHWM")-before) / 1024
}

// procStatus reads a kB field of /proc/<proc>/status (proc: "self" or a pid).
func procStatus(b testing.TB, proc, field string) int64 {
	f, err := os.Open("/proc/" + proc + "/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	b.Fatalf("no %s in /proc/%s/status", field, proc)
	return 0
}

// BenchmarkArchive: shed_zip and shed_unzip of a 1,000-file, 200 MB folder over HTTP
// against the zip -r and unzip command-line tools on the same files, interleaved in the
// same run; metrics: each side's seconds, the ratio (target ≤ 1.5) and the server
// process's peak RSS growth during the tool call (target < 64 MB).
func BenchmarkArchive(b *testing.B) {
	for _, tool := range []string{"zip", "unzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("%s not installed (Debian package %s)", tool, tool)
		}
	}
	e := start(b, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "4000"})
	zone := filepath.Join(e.base, storageDir)
	benchFolder(b, filepath.Join(zone, "proj"), 1000, 200<<10)
	run := func(dir string, args ...string) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v %s", args, err, out)
		}
	}
	call := func(tool string, args map[string]any) {
		if r := e.post(tool, args, nil); !r.Success {
			b.Fatalf("%s: %s", tool, r.raw)
		}
	}
	clean := func(paths ...string) {
		for _, p := range paths {
			if err := os.RemoveAll(filepath.Join(zone, p)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("zip", func(b *testing.B) {
		var ours, cli time.Duration
		var rss float64
		for range b.N {
			clean("proj.zip", "cli.zip")
			t0 := time.Now()
			rss = max(rss, peakRSS(b, func() { call("shed_zip", map[string]any{"zone": "storage", "src": "proj"}) }))
			ours += time.Since(t0)
			t0 = time.Now()
			run(zone, "zip", "-q", "-r", "cli.zip", "proj")
			cli += time.Since(t0)
		}
		report(b, ours, cli, rss)
		for name, p := range map[string]string{"fileshed-MB": "proj.zip", "cli-MB": "cli.zip"} {
			if fi, err := os.Stat(filepath.Join(zone, p)); err == nil {
				b.ReportMetric(float64(fi.Size())/(1<<20), name)
			}
		}
	})
	b.Run("unzip", func(b *testing.B) {
		// Both sides extract the same archive (shed_zip's: zip -r takes a minute here).
		clean("cli.zip")
		call("shed_zip", map[string]any{"zone": "storage", "src": "proj", "dest": "cli.zip"})
		var ours, cli time.Duration
		var rss float64
		for range b.N {
			clean("ours", "theirs")
			t0 := time.Now()
			rss = max(rss, peakRSS(b, func() { call("shed_unzip", map[string]any{"zone": "storage", "src": "cli.zip", "dest": "ours"}) }))
			ours += time.Since(t0)
			t0 = time.Now()
			run(zone, "unzip", "-q", "cli.zip", "-d", "theirs")
			cli += time.Since(t0)
		}
		report(b, ours, cli, rss)
	})
}

func report(b *testing.B, ours, cli time.Duration, rss float64) {
	b.ReportMetric(ours.Seconds()/float64(b.N), "fileshed-s")
	b.ReportMetric(cli.Seconds()/float64(b.N), "cli-s")
	b.ReportMetric(ours.Seconds()/cli.Seconds(), "ratio")
	b.ReportMetric(rss, "peak-rss-growth-MB")
}
