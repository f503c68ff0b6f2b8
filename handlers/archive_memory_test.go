package handlers_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestFolderZipMemoryIsTheCentralDirectory (issue 24 item 6): zipping a folder held every
// entry (the plan listed each file, archive/zip kept each FileHeader): about 108 MB of
// server memory per 100,000 entries, and anyone holding a folder link can ask for it. The
// walk now streams and the writer keeps only the central directory it must write at the
// end (about 80 bytes a file here, beside one compressor of about 1 MiB): for 20,000 files
// shed_zip and ?zip stay under 6 MiB of live heap (they held 14.4 and 7.9 MiB).
func TestFolderZipMemoryIsTheCentralDirectory(t *testing.T) {
	if !alone(t) { // measures the live heap
		return
	}
	e := startLinks(t, nil)
	dir := filepath.Join(e.base, "users/alice/Storage/data/many")
	for d := range 20 {
		sub := filepath.Join(dir, fmt.Sprintf("folder-%02d", d))
		if err := os.MkdirAll(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		for f := range 1000 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file-%04d.txt", f)), []byte("entry"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	url := e.link("alice", map[string]any{"zone": "storage", "path": "many"})["url"].(string) + "?zip"
	tool := peakHeap(func() {
		r := e.post("shed_zip", map[string]any{"zone": "storage", "src": "many"}, as("alice"))
		wantOK(t, r)
		if r.Data["files_count"] != 20000.0 {
			t.Errorf("files_count %v", r.Data["files_count"])
		}
	})
	link := peakHeap(func() {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if n, err := io.Copy(io.Discard, resp.Body); resp.StatusCode != http.StatusOK || n < 20000*50 || err != nil {
			t.Errorf("?zip: %d, %d bytes, %v", resp.StatusCode, n, err)
		}
	})
	t.Logf("heap peak: shed_zip %.1f MiB, ?zip %.1f MiB", tool/(1<<20), link/(1<<20))
	for what, n := range map[string]float64{"shed_zip": tool, "?zip": link} {
		if n > 6<<20 {
			t.Errorf("%s of 20,000 files: heap rose %.1f MiB, want < 6 MiB", what, n/(1<<20))
		}
	}
}
