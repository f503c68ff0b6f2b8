package handlers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The server's own peak memory (issue 24 item 6): each benchmark runs the real server
// binary as a child process, so the benchmark's client (which builds the bodies) is not
// counted, and reports the growth of the server's peak resident set (VmHWM, reset with
// clear_refs before each call) over its resident set just before the call.

// serverPeakMB runs op against the server process pid and returns how far its peak RSS rose
// above its resident size before op, in MB.
func serverPeakMB(b *testing.B, pid int, op func()) float64 {
	p := strconv.Itoa(pid)
	if err := os.WriteFile("/proc/"+p+"/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
	before := procStatus(b, p, "VmRSS")
	op()
	return float64(procStatus(b, p, "VmHWM")-before) / 1024
}

// memServer starts a fresh server process of the binary bin (buildBinary) with room for
// 100 MB files: a fresh one per measure, since the Go runtime keeps what an earlier call
// took resident for a while.
func memServer(b *testing.B, bin string, env ...string) (*server, string) {
	base := filepath.Join(b.TempDir(), "data")
	srv := startBinary(b, bin, base, append([]string{"FILESHED_QUOTA_PER_USER_MB=10000", "FILESHED_MAX_FILE_SIZE_MB=300"}, env...)...)
	benchPost(b, srv, "shed_stats", nil) // warm up: state database, zone layout
	return srv, base
}

// benchPost sends body to tool and fails the benchmark unless the call succeeded.
func benchPost(b *testing.B, srv *server, tool string, body []byte) map[string]any {
	resp, err := http.Post(srv.url+"/"+tool, "application/json", bytes.NewReader(body))
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

// textOf is about size bytes of text lines (with quotes, tabs and an accent, so the JSON
// body holds escapes).
func textOf(size int) string {
	var sb strings.Builder
	sb.Grow(size + 100)
	for i := 0; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, "%08d\tthe \"quick\" brown fox jumps over the lazy dog, café %d\n", i, i%97)
	}
	return sb.String()
}

// BenchmarkCreateFileRSS: shed_create_file of a 100 MB body in Storage and in Documents
// (where the file is committed too). Reported: the server's peak RSS growth and its ratio
// to the body (target <= 2.5).
func BenchmarkCreateFileRSS(b *testing.B) {
	bin := buildBinary(b)
	text := textOf(100 << 20)
	for _, zone := range []string{"storage", "documents"} {
		b.Run(zone, func(b *testing.B) {
			body, _ := json.Marshal(map[string]any{"zone": zone, "path": "big.txt", "content": text})
			var peak float64
			for range b.N {
				srv, _ := memServer(b, bin)
				peak = max(peak, serverPeakMB(b, srv.cmd.Process.Pid, func() { benchPost(b, srv, "shed_create_file", body) }))
			}
			b.ReportMetric(float64(len(body))/(1<<20), "body-MB")
			b.ReportMetric(peak, "peak-RSS-growth-MB")
			b.ReportMetric(peak/(float64(len(body))/(1<<20)), "x-body")
		})
	}
}

// BenchmarkPatchTextRSS: edits of a 100 MB text file (a pattern replace over the whole
// text, an insertion after every line matching a pattern, a line replace, and
// shed_convert_eol). Reported: the server's peak RSS growth per edit, as a multiple of the
// file.
func BenchmarkPatchTextRSS(b *testing.B) {
	bin := buildBinary(b)
	text := textOf(100 << 20)
	edits := []struct{ name, tool, args string }{
		{"replace-pattern", "shed_patch_text", `"position":"replace","pattern":"fox (\\w+)","content":"cat \\1","match_all":true`},
		{"after-pattern", "shed_patch_text", `"position":"after","pattern":"café 1$","content":"inserted","match_all":true`},
		{"replace-line", "shed_patch_text", `"position":"replace","line":1000,"end_line":2000,"content":"x"`},
		{"convert-eol", "shed_convert_eol", `"to":"dos"`},
	}
	for _, ed := range edits {
		b.Run(ed.name, func(b *testing.B) {
			var peak float64
			for range b.N {
				b.StopTimer()
				srv, base := memServer(b, bin)
				file := filepath.Join(base, "users/local/Storage/data/big.txt")
				if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				body := []byte(`{"zone":"storage","path":"big.txt",` + ed.args + `}`)
				peak = max(peak, serverPeakMB(b, srv.cmd.Process.Pid, func() { benchPost(b, srv, ed.tool, body) }))
			}
			b.ReportMetric(peak, "peak-RSS-growth-MB")
			b.ReportMetric(peak/(float64(len(text))/(1<<20)), "x-file")
		})
	}
}

// BenchmarkZipRSS: a folder of 100,000 small files (100 folders of 1,000) zipped by
// shed_zip and streamed through a folder link's ?zip, each by a fresh server process on the
// same storage. Reported: the server's peak RSS growth for each.
func BenchmarkZipRSS(b *testing.B) {
	bin := buildBinary(b)
	base := filepath.Join(b.TempDir(), "data")
	dir := filepath.Join(base, "users/local/Storage/data/many")
	for i := range 100_000 {
		p := filepath.Join(dir, fmt.Sprintf("d%03d/file-%06d.txt", i/1000, i))
		if i%1000 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte("entry "+strconv.Itoa(i)+"\n"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	fresh := func() *server {
		// 100,101 files and folders: over the default file quota (quota_files_per_user).
		srv := startBinary(b, bin, base, "FILESHED_QUOTA_PER_USER_MB=10000", "FILESHED_QUOTA_FILES_PER_USER=1000000")
		benchPost(b, srv, "shed_stats", nil)
		return srv
	}
	stop := func(srv *server) { _ = srv.cmd.Process.Kill(); _ = srv.cmd.Wait() }
	b.Run("tool", func(b *testing.B) {
		var peak float64
		for i := range b.N {
			srv := fresh()
			body := []byte(`{"zone":"storage","src":"many","dest":"out` + strconv.Itoa(i) + `.zip"}`)
			peak = max(peak, serverPeakMB(b, srv.cmd.Process.Pid, func() { benchPost(b, srv, "shed_zip", body) }))
			stop(srv)
		}
		b.ReportMetric(peak, "peak-RSS-growth-MB")
	})
	b.Run("link", func(b *testing.B) {
		var peak float64
		for range b.N {
			srv := fresh()
			link := benchPost(b, srv, "shed_link_create", []byte(`{"zone":"storage","path":"many"}`))
			url := link["data"].(map[string]any)["url"].(string) + "?zip"
			peak = max(peak, serverPeakMB(b, srv.cmd.Process.Pid, func() {
				resp, err := http.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || n < 100_000*50 {
					b.Fatalf("?zip: status %d, %d bytes, %v", resp.StatusCode, n, err)
				}
			}))
			stop(srv)
		}
		b.ReportMetric(peak, "peak-RSS-growth-MB")
	})
}
