package handlers_test

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/archive/ziptest"
)

// TestZipinfoListsAndWarns: entries with their fields, totals, and a warning for each
// entry shed_unzip would refuse or skip; the listing is bounded.
func TestZipinfoListsAndWarns(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.zipAt(uploadsDir+"/h.zip", zipOf(
		ziptest.Entry{Name: "ok.txt", Body: "fine"},
		ziptest.Entry{Name: "../../x", Body: "slip"},
		ziptest.Entry{Name: "run", Body: "#!", Mode: 0o4755 | fs.ModeSetuid},
		ziptest.Entry{Name: "link", Body: "/etc", Mode: fs.ModeSymlink | 0o777},
		ziptest.Entry{Name: "dir/"},
	))
	r := e.post("shed_zipinfo", map[string]any{"zone": "uploads", "path": "h.zip"}, nil)
	wantOK(t, r)
	files := r.Data["files"].([]any)
	if r.Data["files_count"] != float64(5) || len(files) != 5 || r.Data["warnings_count"] != float64(2) {
		t.Fatalf("data: %s", r.raw)
	}
	first := files[0].(map[string]any)
	if first["name"] != "ok.txt" || first["size"] != float64(4) || first["modified"] != "2026-01-02 03:04" || first["mode"] != "-rw-r--r--" {
		t.Fatalf("entry: %v", first)
	}
	if files[4].(map[string]any)["is_dir"] != true || !strings.Contains(fmt.Sprint(r.Data["warnings"]), "../../x") {
		t.Fatalf("data: %s", r.raw)
	}
	// 150 entries: 100 listed.
	var es []ziptest.Entry
	for i := range 150 {
		es = append(es, ziptest.Entry{Name: fmt.Sprintf("f%03d", i), Body: "x"})
	}
	e.zipAt(storageDir+"/many.zip", zipOf(es...))
	r = e.post("shed_zipinfo", map[string]any{"zone": "storage", "path": "many.zip"}, nil)
	wantOK(t, r)
	if len(r.Data["files"].([]any)) != 100 || r.Data["truncated"] != true || r.Data["files_count"] != float64(150) {
		t.Fatalf("bounds: files %d", len(r.Data["files"].([]any)))
	}
	wantError(t, e.post("shed_zipinfo", map[string]any{"zone": "storage"}, nil), "MISSING_PARAMETER")
	wantError(t, e.post("shed_zipinfo", map[string]any{"zone": "storage", "path": "nope.zip"}, nil), "FILE_NOT_FOUND")
}
