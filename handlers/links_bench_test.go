package handlers_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchFileSize is the file of the download benchmarks: 1 GiB.
const benchFileSize = 1 << 30

// bigFile makes a file of size bytes in alice's Storage (written, not sparse, so servers
// read real pages from the page cache) and a link to it.
func bigFile(b testing.TB, e *env, size int) (path, url string) {
	b.Helper()
	path = filepath.Join(e.base, "users/alice/Storage/data/big.bin")
	_ = os.MkdirAll(filepath.Dir(path), 0o700)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	chunk := []byte(strings.Repeat("fileshed", 1<<17)) // 1 MiB
	for range size / len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	f.Close()
	return path, e.link("alice", map[string]any{"zone": "storage", "path": "big.bin"})["url"].(string)
}

// download fetches url (size bytes) to io.Discard and returns the time it took.
func download(b testing.TB, url string, size int64) time.Duration {
	b.Helper()
	start := time.Now()
	resp, err := http.Get(url)
	if err != nil {
		b.Error(err)
		return 0
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != size || resp.StatusCode != 200 {
		b.Errorf("download: %d bytes, status %d, %v", n, resp.StatusCode, err)
	}
	return time.Since(start)
}

// startNginx serves dir with sendfile on a free loopback port and returns its base URL;
// the benchmark is skipped, naming the package, when nginx is not installed.
func startNginx(b *testing.B, dir string) string {
	b.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		b.Skip("nginx not found: install the Debian package nginx to compare with it")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	tmp := b.TempDir()
	conf := fmt.Sprintf(`daemon off; master_process off; worker_processes 1; pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 64; }
http { sendfile on; tcp_nopush on; access_log off; types { } default_type application/octet-stream;
  client_body_temp_path %[1]s/b; proxy_temp_path %[1]s/p; fastcgi_temp_path %[1]s/f; uwsgi_temp_path %[1]s/u; scgi_temp_path %[1]s/s;
  server { listen %[2]s; root %[3]s; } }
`, tmp, addr, dir)
	cfg := filepath.Join(tmp, "nginx.conf")
	_ = os.WriteFile(cfg, []byte(conf), 0o600)
	cmd := exec.Command(bin, "-c", cfg, "-p", tmp, "-e", filepath.Join(tmp, "error.log"))
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr
		}
		time.Sleep(20 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(tmp, "error.log"))
	b.Fatalf("nginx did not start: %s", log)
	return ""
}

// BenchmarkLinkDownloadVsNginx: 1 GiB over loopback through a link, against nginx serving
// the same file with sendfile; best of 3 each, interleaved. Reports MB/s and the ratio.
func BenchmarkLinkDownloadVsNginx(b *testing.B) {
	e := startLinks(b, nil)
	path, url := bigFile(b, e, benchFileSize)
	ngx := startNginx(b, filepath.Dir(path)) + "/big.bin"
	download(b, ngx, benchFileSize) // warm the page cache
	best := map[string]time.Duration{}
	for range 3 {
		for name, u := range map[string]string{"fileshed": url, "nginx": ngx} {
			if d := download(b, u, benchFileSize); best[name] == 0 || d < best[name] {
				best[name] = d
			}
		}
	}
	mbps := func(d time.Duration) float64 { return benchFileSize / d.Seconds() / (1 << 20) }
	b.ReportMetric(mbps(best["fileshed"]), "fileshed-MB/s")
	b.ReportMetric(mbps(best["nginx"]), "nginx-MB/s")
	b.ReportMetric(best["nginx"].Seconds()/best["fileshed"].Seconds(), "ratio")
}

// resetPeak resets this process's peak RSS (VmHWM) to its current RSS.
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// BenchmarkLinkParallelRSS: 10 clients download the 1 GiB file at once; reports the
// growth of the peak RSS (server and clients share the process) and the total time.
func BenchmarkLinkParallelRSS(b *testing.B) {
	e := startLinks(b, nil)
	_, url := bigFile(b, e, benchFileSize)
	download(b, url, benchFileSize)
	resetPeak()
	before := peakRSSOf(b, os.Getpid())
	start := time.Now()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { download(b, url, benchFileSize) })
	}
	wg.Wait()
	b.ReportMetric(float64(peakRSSOf(b, os.Getpid())-before)/(1<<20), "peak-RSS-growth-MB")
	b.ReportMetric(time.Since(start).Seconds(), "s/10-downloads")
}

// BenchmarkLinkZipFirstByte: a folder of 1,000 files (4 KiB each) through ?zip; reports
// the time to the first byte of the stream and to the end.
func BenchmarkLinkZipFirstByte(b *testing.B) {
	e := startLinks(b, nil)
	dir := filepath.Join(e.base, "users/alice/Storage/data/many")
	_ = os.MkdirAll(dir, 0o700)
	content := []byte(strings.Repeat("z", 4096))
	for i := range 1000 {
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.txt", i)), content, 0o600)
	}
	url := e.link("alice", map[string]any{"zone": "storage", "path": "many"})["url"].(string) + "?zip"
	var first, total time.Duration
	for range b.N {
		start := time.Now()
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		one := make([]byte, 1)
		if _, err := io.ReadFull(resp.Body, one); err != nil {
			b.Fatal(err)
		}
		first += time.Since(start)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		total += time.Since(start)
	}
	b.ReportMetric(float64(first.Microseconds())/float64(b.N)/1000, "ms-first-byte")
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms-whole-zip")
}
