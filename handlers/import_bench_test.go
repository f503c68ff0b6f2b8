package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

// peakRSSOf is VmHWM (the peak resident set) of process pid, in bytes.
func peakRSSOf(b testing.TB, pid int) int64 {
	return procStatus(b, strconv.Itoa(pid), "VmHWM") << 10
}

// BenchmarkImport200MB imports a 200 MB file from the fake Open WebUI over loopback into the
// real server binary (session mode), against a plain io.Copy of the same download into a
// file in the same directory tree. Reported: ratio (import throughput / io.Copy's, want
// >= 0.8) and rss_growth_MB (growth of the server's peak RSS during the imports, want < 32).
func BenchmarkImport200MB(b *testing.B) {
	const size = 200 << 20
	fake := owuitest.New(b)
	fake.AddUser("tok", owui.User{ID: "u1", Name: "U", Role: "user"})
	fake.AddGeneratedFile("u1", owui.FileInfo{ID: "f-big", Filename: "big.bin", Size: size}, size)
	dir := b.TempDir()
	bin := buildBinary(b)
	base := filepath.Join(dir, "data")
	srv := startBinary(b, bin, base, "FILESHED_AUTH_MODE=session", "FILESHED_OPENWEBUI_URL="+fake.URL,
		"FILESHED_MAX_FILE_SIZE_MB=1000", "FILESHED_QUOTA_PER_USER_MB=10000")
	call := func(tool, body string) map[string]any {
		req, _ := http.NewRequest(http.MethodPost, srv.url+"/"+tool, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("X-OpenWebUI-Chat-Id", "bench")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out["success"] != true {
			b.Fatalf("%s: %v %v", tool, out, err)
		}
		return out
	}
	call("shed_stats", "") // warm up: identity, state database, zone layout
	baseline := func() time.Duration {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodGet, fake.URL+"/api/v1/files/f-big/content", nil)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Create(filepath.Join(base, "baseline.bin"))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(f, resp.Body)
		resp.Body.Close()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil || n != size {
			b.Fatalf("baseline copied %d bytes: %v", n, err)
		}
		d := time.Since(start)
		must(b, os.Remove(f.Name()))
		return d
	}
	before := peakRSSOf(b, srv.cmd.Process.Pid)
	var plain, imported time.Duration
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		plain += baseline()
		start := time.Now()
		out := call("shed_import", `{"file_id":"f-big"}`)
		imported += time.Since(start)
		path := out["data"].(map[string]any)["imported"].([]any)[0].(map[string]any)["path"].(string)
		b.StopTimer()
		call("shed_delete", `{"zone":"uploads","path":`+strconv.Quote(path)+`}`)
		b.StartTimer()
	}
	b.StopTimer()
	growth := peakRSSOf(b, srv.cmd.Process.Pid) - before
	b.ReportMetric(float64(plain)/float64(imported), "ratio")
	b.ReportMetric(float64(growth)/(1<<20), "rss_growth_MB")
}
