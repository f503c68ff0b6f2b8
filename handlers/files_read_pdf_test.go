package handlers_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReadPDFPages reads a PDF through HTTP: all pages by default with page_count, a page
// range, a page range past the end, pages on a text file, shed_file_type's page count,
// and the read-only Uploads zone.
func TestReadPDFPages(t *testing.T) {
	t.Parallel()
	needPoppler(t)
	e := start(t, nil)
	doc := textPDF(5, "the quarterly report")
	e.write(zoneDir+"report.pdf", string(doc))
	e.write("users/local/Uploads/unknown/up.pdf", string(doc))

	r := e.post("shed_read", map[string]any{"zone": "storage", "path": "report.pdf"}, nil)
	wantOK(t, r)
	content, _ := r.Data["content"].(string)
	for i := 1; i <= 5; i++ {
		if !strings.Contains(content, fmt.Sprintf("[page %d]\nPage %d: the quarterly report", i, i)) {
			t.Fatalf("page %d missing from %q", i, content)
		}
	}
	if r.Data["page_count"] != 5.0 || r.Data["pages"] != "1-5" || r.Data["truncated"] != false || r.Data["next_pages"] != nil {
		t.Fatalf("data = %v", r.Data)
	}

	r = e.post("shed_read", map[string]any{"zone": "uploads", "path": "up.pdf", "pages": "3-4"}, nil)
	wantOK(t, r)
	content, _ = r.Data["content"].(string)
	if !strings.Contains(content, "Page 3:") || !strings.Contains(content, "Page 4:") || strings.Contains(content, "Page 2:") ||
		strings.Contains(content, "Page 5:") || r.Data["pages"] != "3-4" || r.Data["next_pages"] != "5-5" {
		t.Fatalf("pages 3-4: %v", r.Data)
	}
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "report.pdf", "pages": "4-"}, nil)
	wantOK(t, r)
	if r.Data["pages"] != "4-5" {
		t.Fatalf("pages 4-: %v", r.Data)
	}
	for _, bad := range []string{"9", "0-2", "3-1", "x", "1-y"} {
		r = e.post("shed_read", map[string]any{"zone": "storage", "path": "report.pdf", "pages": bad}, nil)
		wantError(t, r, "INVALID_PARAMETER")
		if r.Hint == "" {
			t.Fatalf("pages %q: no hint", bad)
		}
	}
	e.write(zoneDir+"plain.txt", "text\n")
	wantError(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "plain.txt", "pages": "1"}, nil), "INVALID_PARAMETER")

	r = e.post("shed_file_type", map[string]any{"zone": "storage", "path": "report.pdf"}, nil)
	wantOK(t, r)
	if r.Data["page_count"] != 5.0 || r.Data["magic"] != "PDF document" || r.Data["pdf_encrypted"] != false {
		t.Fatalf("file_type: %v", r.Data)
	}
}

// TestReadPDFOutputCap walks a PDF longer than the output cap: whole pages only, then
// next_pages, until the last page; every page is seen exactly once.
func TestReadPDFOutputCap(t *testing.T) {
	t.Parallel()
	needPoppler(t)
	e := start(t, map[string]string{"FILESHED_MAX_OUTPUT_DEFAULT": "2000"})
	e.write(zoneDir+"long.pdf", string(textPDF(30, strings.Repeat("words ", 40))))
	seen, pages := map[int]int{}, ""
	for range 30 {
		body := map[string]any{"zone": "storage", "path": "long.pdf"}
		if pages != "" {
			body["pages"] = pages
		}
		r := e.post("shed_read", body, nil)
		wantOK(t, r)
		content := r.Data["content"].(string)
		if len(content) > 2000 {
			t.Fatalf("content %d bytes over the cap", len(content))
		}
		for i := 1; i <= 30; i++ {
			if strings.Contains(content, fmt.Sprintf("Page %d:", i)) {
				seen[i]++
			}
		}
		next, _ := r.Data["next_pages"].(string)
		if next == "" {
			break
		}
		if !strings.Contains(r.Message, next) || r.Data["truncated"] != true {
			t.Fatalf("no hint for %s: %v", next, r.Message)
		}
		pages = next
	}
	for i := 1; i <= 30; i++ {
		if seen[i] != 1 {
			t.Fatalf("page %d seen %d times", i, seen[i])
		}
	}
	// One page longer than the cap: its head, marked, and how to get the rest.
	wide := newPDF()
	wide.textPage(slices.Repeat([]string{strings.Repeat("dense ", 12)}, 45)...)
	wide.textPage("second")
	e.write(zoneDir+"wide.pdf", string(wide.bytes()))
	r := e.post("shed_read", map[string]any{"zone": "storage", "path": "wide.pdf"}, nil)
	wantOK(t, r)
	if c := r.Data["content"].(string); len(c) > 2000 || !strings.Contains(c, "[page cut at the output cap]") ||
		r.Data["page_cut"] != true || r.Data["next_pages"] != "2-2" || !strings.Contains(r.Message, "pdftotext -layout -f 1 -l 1") {
		t.Fatalf("page over the cap: %d bytes, %v", len(c), r.Message)
	}
}

// TestReadPDFHostile covers the hostile PDFs of issue 15: encrypted, image-only,
// truncated, a FlateDecode bomb, 100,000 pages, and a file named .pdf that is text. Every
// answer is an envelope (never a 500) and the server stays healthy.
func TestReadPDFHostile(t *testing.T) {
	t.Parallel() // owns its server; its one clock is a 20 s bound (issue 34)
	needPoppler(t)
	e := start(t, nil)

	enc := newPDF()
	enc.textPage("secret")
	hexes := strings.Repeat("5a", 32)
	n := enc.add("<</Filter/Standard/V 1/R 2/O<" + hexes + ">/U<" + strings.Repeat("a7", 32) + ">/P -4>>")
	enc.encrypt = fmt.Sprintf("/Encrypt %d 0 R", n)
	e.write(zoneDir+"locked.pdf", string(enc.bytes()))
	r := e.post("shed_read", map[string]any{"zone": "storage", "path": "locked.pdf"}, nil)
	wantError(t, r, "PDF_ENCRYPTED")
	if !strings.Contains(r.Hint, "password") {
		t.Fatalf("hint %q", r.Hint)
	}
	r = e.post("shed_file_type", map[string]any{"zone": "storage", "path": "locked.pdf"}, nil)
	wantOK(t, r)
	if r.Data["pdf_error"] != "PDF_ENCRYPTED" {
		t.Fatalf("file_type on encrypted: %v", r.Data)
	}

	scan := newPDF()
	drawing := []byte("0.5 g 72 72 400 600 re f")
	scan.page(scan.stream(drawing, true))
	scan.page(scan.stream(drawing, true))
	e.write(zoneDir+"scan.pdf", string(scan.bytes()))
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "scan.pdf"}, nil)
	wantError(t, r, "PDF_NO_TEXT")
	if r.Details["page_count"] != 2.0 || r.Hint == "" {
		t.Fatalf("image-only: %+v", r)
	}

	whole := textPDF(3, "cut short")
	e.write(zoneDir+"stub.pdf", string(whole[:20]))
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "stub.pdf"}, nil)
	wantError(t, r, "PDF_UNREADABLE")
	if r.Hint == "" || r.Details["engine_message"] == nil {
		t.Fatalf("truncated: %+v", r)
	}
	// Cut in the middle: poppler rebuilds the cross-reference table and reads what is left.
	e.write(zoneDir+"half.pdf", string(whole[:len(whole)*2/3]))
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "half.pdf"}, nil)
	if r.Status != 200 || (!r.Success && r.Error != "PDF_UNREADABLE") {
		t.Fatalf("half a PDF: %+v", r)
	}

	// A 130 KB file whose page inflates to 64 MB of text operators (poppler drops what
	// falls off the page): memory stays under the rlimit, the answer within the cap.
	bomb := newPDF()
	bomb.page(bomb.stream(append([]byte("BT /F1 12 Tf 72 720 Td 14 TL\n"), bytes.Repeat([]byte("(bomb) ' "), 64<<20/9)...), true))
	doc := bomb.bytes()
	e.write(zoneDir+"bomb.pdf", string(doc))
	t0 := time.Now()
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "bomb.pdf"}, nil)
	wantOK(t, r)
	if took := time.Since(t0); took > 20*time.Second || !strings.Contains(r.Data["content"].(string), "bomb") ||
		len(r.Data["content"].(string)) > 50000 {
		t.Fatalf("bomb (%d bytes) took %v: %v", len(doc), took, r.Message)
	}
	t.Logf("bomb: %d-byte file, answered in %v", len(doc), time.Since(t0))

	// A text file named .pdf, and one that only starts like a PDF: read as text.
	e.write(zoneDir+"notes.pdf", "just notes\n")
	e.write(zoneDir+"fake.pdf", "%PDF-1.7 is the version I mean\n")
	for _, name := range []string{"notes.pdf", "fake.pdf"} {
		r = e.post("shed_read", map[string]any{"zone": "storage", "path": name}, nil)
		wantOK(t, r)
		if c := r.Data["content"].(string); !strings.HasSuffix(c, "\n") || r.Data["total_lines"] != 1.0 {
			t.Fatalf("%s: %v", name, r.Data)
		}
	}
}

// TestReadPDFHundredThousandPages: a 100,000-page PDF (7 MB, one shared content stream)
// is counted by shed_file_type, its last pages are read directly, and the default read
// stops at the output cap with next_pages.
func TestReadPDFHundredThousandPages(t *testing.T) {
	t.Parallel() // owns its server; its one clock is a 20 s bound (issue 34)
	needPoppler(t)
	e := start(t, nil)
	d := newPDF()
	c := d.stream([]byte("BT /F1 12 Tf 72 720 Td (same text on every page) Tj ET"), false)
	for range 100_000 {
		d.page(c)
	}
	e.write(zoneDir+"huge.pdf", string(d.bytes()))
	r := e.post("shed_file_type", map[string]any{"zone": "storage", "path": "huge.pdf"}, nil)
	wantOK(t, r)
	if r.Data["page_count"] != 100000.0 {
		t.Fatalf("page_count %v", r.Data["page_count"])
	}
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "huge.pdf", "pages": "99999-100000"}, nil)
	wantOK(t, r)
	if c := r.Data["content"].(string); !strings.Contains(c, "[page 100000]\nsame text on every page") || r.Data["next_pages"] != nil {
		t.Fatalf("last pages: %v", r.Data)
	}
	t0 := time.Now()
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "huge.pdf"}, nil)
	wantOK(t, r)
	if r.Data["next_pages"] == nil || r.Data["truncated"] != true || time.Since(t0) > 20*time.Second {
		t.Fatalf("default read: %v in %v", r.Message, time.Since(t0))
	}
	t.Logf("100,000 pages: %s in %v", r.Message, time.Since(t0))
}

// TestReadPDFTimeout: a PDF whose extraction runs for minutes (2,000 pages, each parsing
// the same 16 MB content stream) is stopped at the timeout; the server answers the next
// call at once.
func TestReadPDFTimeout(t *testing.T) {
	t.Parallel() // owns its server; the bound is 8 s over the timeout (issue 34)
	needPoppler(t)
	e := start(t, map[string]string{"FILESHED_EXEC_TIMEOUT_DEFAULT": "2"})
	d := newPDF()
	c := d.stream(bytes.Repeat([]byte("q Q "), 4<<20), true)
	for range 2000 {
		d.page(c)
	}
	e.write(zoneDir+"slow.pdf", string(d.bytes()))
	t0 := time.Now()
	r := e.post("shed_read", map[string]any{"zone": "storage", "path": "slow.pdf"}, nil)
	wantError(t, r, "TIMEOUT")
	if took := time.Since(t0); took > 10*time.Second || !strings.Contains(r.Hint, "pages=") {
		t.Fatalf("timeout after %v: %+v", took, r)
	}
	e.write(zoneDir+"after.txt", "still here\n")
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "after.txt"}, nil)
	wantOK(t, r)
}

// TestPDFToolsInExec: pdftotext and pdfinfo are shed_exec commands too; in the read-only
// Uploads zone pdftotext may print to stdout ("-") but not write a file.
func TestPDFToolsInExec(t *testing.T) {
	t.Parallel()
	needPoppler(t)
	e := start(t, nil)
	e.write("users/local/Uploads/unknown/up.pdf", string(textPDF(2, "uploaded")))
	r := e.post("shed_exec", map[string]any{"zone": "uploads", "cmd": "pdftotext", "args": []string{"-f", "2", "-l", "2", "up.pdf", "-"}}, nil)
	wantOK(t, r)
	if out := r.Data["stdout"].(string); !strings.Contains(out, "Page 2: uploaded") || strings.Contains(out, "Page 1") {
		t.Fatalf("stdout %q", out)
	}
	wantError(t, e.post("shed_exec", map[string]any{"zone": "uploads", "cmd": "pdftotext", "args": []string{"up.pdf", "out.txt"}}, nil), "ARGUMENT_FORBIDDEN")
	r = e.post("shed_exec", map[string]any{"zone": "uploads", "cmd": "pdfinfo", "args": []string{"up.pdf"}}, nil)
	wantOK(t, r)
	if !strings.Contains(r.Data["stdout"].(string), "Pages:           2") {
		t.Fatalf("pdfinfo: %v", r.Data["stdout"])
	}
	// In a versioned zone a text file written by pdftotext is committed like any write.
	e.write("users/local/Documents/data/d.pdf", string(textPDF(1, "versioned")))
	wantOK(t, e.post("shed_exec", map[string]any{"zone": "documents", "cmd": "pdftotext", "args": []string{"d.pdf", "d.txt"}}, nil))
	r = e.post("shed_history", map[string]any{"zone": "documents", "path": "d.txt"}, nil)
	wantOK(t, r)
	if !strings.Contains(r.raw, "pdftotext") {
		t.Fatalf("d.txt not committed: %s", r.raw)
	}
}

// TestReadPDFWithoutPoppler: on a server without poppler-utils a PDF read answers
// COMMAND_NOT_FOUND naming the package (PATH emptied after start-up stands for it).
func TestReadPDFWithoutPoppler(t *testing.T) {
	e := start(t, nil)
	e.write(zoneDir+"r.pdf", string(textPDF(1, "x")))
	t.Setenv("PATH", t.TempDir())
	r := e.post("shed_read", map[string]any{"zone": "storage", "path": "r.pdf"}, nil)
	wantError(t, r, "COMMAND_NOT_FOUND")
	if !strings.Contains(r.Hint, "poppler-utils") {
		t.Fatalf("hint %q", r.Hint)
	}
	r = e.post("shed_file_type", map[string]any{"zone": "storage", "path": "r.pdf"}, nil)
	wantOK(t, r)
	if r.Data["magic"] != "PDF document" || r.Data["pdf_error"] != "COMMAND_NOT_FOUND" {
		t.Fatalf("file_type without poppler: %v", r.Data)
	}
}
