package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestParallelWritesCannotOvershootQuota: 10 parallel 6 MB writes into a 10 MB quota; at
// most one succeeds (one fits), the others get QUOTA_EXCEEDED, and the usage is exact.
func TestParallelWritesCannotOvershootQuota(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "10"})
	content := strings.Repeat("x", 6<<20)
	var wg sync.WaitGroup
	replies := make([]reply, 10)
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := fmt.Sprintf("f%d.txt", i)
			// A pre-built body: marshalling 6 MB ten times under -race costs seconds.
			replies[i] = e.post("shed_create_file", `{"zone":"storage","path":"`+path+`","content":"`+content+`"}`, nil)
		}()
	}
	wg.Wait()
	ok := 0
	for _, r := range replies {
		switch {
		case r.Success:
			ok++
		case r.Error == "QUOTA_EXCEEDED":
			if r.Details["limit"] != float64(10<<20) || r.Details["requested"] != float64(6<<20) || r.Details["used"] == nil {
				t.Errorf("details: %s", r.raw)
			}
		default:
			t.Errorf("unexpected: %s", r.raw)
		}
	}
	if ok != 1 {
		t.Fatalf("%d writes succeeded, want exactly 1", ok)
	}
	if e.used(t) != 6<<20 {
		t.Fatalf("usage %d, want %d", e.used(t), 6<<20)
	}
	noTemp(t, e.base)
}

// TestOversizedContentIsRefusedWholesale: a 50 MB content with max_file_size_mb=10 is
// refused (413 or FILE_TOO_LARGE) and nothing is written.
func TestOversizedContentIsRefusedWholesale(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_MAX_FILE_SIZE_MB": "10"})
	e.write(storageDir+"/f.txt", "old")
	big := `{"zone":"storage","path":"f.txt","content_format":"raw","content":"` + strings.Repeat("y", 50<<20) + `"}`
	for _, tool := range []string{"shed_patch_text", "shed_create_file", "shed_patch_bytes"} {
		r := e.post(tool, big, nil)
		if r.Success || (r.Status != http.StatusRequestEntityTooLarge && r.Error != "FILE_TOO_LARGE") {
			t.Fatalf("%s: %d %s", tool, r.Status, r.raw[:min(len(r.raw), 300)])
		}
	}
	// Content under the body limit but over the file limit: FILE_TOO_LARGE on the result size.
	r := e.post("shed_patch_text", `{"zone":"storage","path":"f.txt","content":"`+strings.Repeat("z", 10<<20)+`"}`, nil)
	wantError(t, r, "FILE_TOO_LARGE")
	// Hex-encoded bytes of a 9 MB file fit the body limit (hex doubles the size).
	r = e.post("shed_create_file", `{"zone":"storage","path":"h.bin","file_type":"bytes","content":"`+strings.Repeat("ab", 9<<20)+`"}`, nil)
	wantOK(t, r)
	if e.disk("f.txt") != "old" || e.used(t) != 3+9<<20 {
		t.Fatalf("usage %d", e.used(t))
	}
	noTemp(t, e.base)
}

// TestQuotaExceededLeavesNothing: a write over the quota fails before touching the disk.
func TestQuotaExceededLeavesNothing(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1"})
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "a.txt", "content": strings.Repeat("a", 1<<19)}, nil))
	r := e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "a.txt", "content": strings.Repeat("b", 1<<19+1)}, nil)
	wantError(t, r, "QUOTA_EXCEEDED")
	r = e.post("shed_patch_text", map[string]any{"zone": "documents", "path": "n/b.txt", "content": strings.Repeat("b", 1<<19+1)}, nil)
	wantError(t, r, "QUOTA_EXCEEDED")
	if e.disk("a.txt") != strings.Repeat("a", 1<<19) || e.used(t) != 1<<19 {
		t.Fatalf("usage %d", e.used(t))
	}
	// Shrinking writes give the space back, and then the write fits.
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "a.txt", "content": "a"}, nil))
	wantOK(t, e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "a.txt", "content": strings.Repeat("b", 1<<19+1)}, nil))
	if e.used(t) != 1<<19+2 {
		t.Fatalf("usage %d", e.used(t))
	}
}
