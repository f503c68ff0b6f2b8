package handlers_test

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// officeZip builds an office document: a zip with the entries given (name -> content).
func officeZip(t testing.TB, entries map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for name, content := range entries {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The text entries of the three office formats, each with "needle" in its second line.
const (
	docxXML = `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
		`<w:p><w:r><w:t>First paragraph</w:t></w:r></w:p><w:p><w:r><w:t>The ne</w:t></w:r><w:r><w:t xml:space="preserve">edle &amp; more</w:t></w:r></w:p></w:body></w:document>`
	odtXML = `<?xml version="1.0"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ` +
		`xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text><text:h>Title</text:h>` +
		`<text:p>An odt <text:span>needle</text:span><text:s/>here</text:p></office:text></office:body></office:document-content>`
	xlsxXML = `<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="2" uniqueCount="2">` +
		`<si><t>Header</t></si><si><r><t>cell with a </t></r><r><t>needle</t></r></si></sst>`
)

// TestSearchPDFAndOfficeFiles: the text of PDFs (through the sandboxed reader, by page) and
// of .docx, .odt and .xlsx files (from their XML) is searched (a text file that only starts
// like a PDF is searched as text, as shed_read reads it); binaries are skipped and
// counted; the text of a PDF is cached by content, so a second search reads it from the
// cache (proved by a cache entry the test rewrites: a server started again finds the new
// text).
func TestSearchPDFAndOfficeFiles(t *testing.T) {
	t.Parallel()
	needPoppler(t)
	e := start(t, nil)
	d := newPDF()
	d.textPage("An introduction")
	d.textPage("Nothing here", "the needle of page two")
	for name, content := range map[string][]byte{
		"docs/report.pdf": d.bytes(),
		"docs/a.docx":     officeZip(t, map[string]string{"word/document.xml": docxXML, "[Content_Types].xml": "<Types/>"}),
		"docs/b.odt":      officeZip(t, map[string]string{"content.xml": odtXML, "mimetype": "application/vnd.oasis.opendocument.text"}),
		"docs/c.xlsx":     officeZip(t, map[string]string{"xl/sharedStrings.xml": xlsxXML}),
		"docs/bin.dat":    append([]byte("needle\x00\x01\x02"), make([]byte, 100)...),
		"docs/plain.zip":  officeZip(t, map[string]string{"needle.txt": "needle"}),
		"docs/fake.pdf":   []byte("%PDF-1.4 says the first line, but\nthe needle is in a text file\n"),
	} {
		e.write(zoneDir+name, string(content))
	}
	r := e.post("shed_search", map[string]any{"query": "needle", "zone": "storage"}, nil)
	wantFound(t, r, "storage:docs/a.docx:2", "storage:docs/b.odt:2", "storage:docs/c.xlsx:2", "storage:docs/fake.pdf:2",
		"storage:docs/report.pdf:2.2")
	kinds := map[string]string{}
	for _, x := range r.Data["files"].([]any) {
		f := x.(map[string]any)
		kinds[f["path"].(string)], _ = f["kind"].(string)
	}
	if kinds["docs/fake.pdf"] != "" || kinds["docs/a.docx"] != "docx" || kinds["docs/b.odt"] != "odt" || kinds["docs/c.xlsx"] != "xlsx" || kinds["docs/report.pdf"] != "pdf" {
		t.Fatalf("kinds: %v", kinds)
	}
	if !strings.Contains(r.raw, `"text":"The needle & more"`) || !strings.Contains(r.raw, `"text":"An odt needle here"`) {
		t.Fatalf("office text: %s", r.raw)
	}
	if sk := r.Data["skipped"].(map[string]any); sk["binary"] != 2.0 {
		t.Fatalf("skipped: %s", r.raw)
	}

	cache := filepath.Join(e.base, ".plain", "text-cache")
	ents, err := os.ReadDir(cache)
	if err != nil || len(ents) != 1 {
		t.Fatalf("text cache after the first search: %v %v", ents, err)
	}
	entry := filepath.Join(cache, ents[0].Name())
	text, _ := os.ReadFile(entry)
	if !strings.Contains(string(text), "the needle of page two") {
		t.Fatalf("cached text: %q", text)
	}
	if fi, _ := os.Stat(entry); fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache entry mode %v", fi.Mode())
	}
	// A second search reads the text from the cache, not from the PDF: a server started
	// again (its memory empty) finds the text the test wrote into the cache entry.
	if err := os.WriteFile(entry, []byte("page one\fthe cached marker\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := e.restartConfig(t, nil)
	e.stop()
	b := serve(t, cfg)
	wantFound(t, b.post("shed_search", map[string]any{"query": "cached marker", "zone": "storage"}, nil), "storage:docs/report.pdf:2.1")
}

// TestSearchOfficeBounds: an office file is read within shed_unzip's bounds: a document
// whose XML expands past archive.max_ratio (a zip bomb), or a zip of more entries than
// archive.max_entries, is skipped and counted as too_large, never expanded; the search goes
// on with the other files.
func TestSearchOfficeBounds(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	bomb := `<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>needle ` + strings.Repeat("a", 20<<20) + `</w:t></w:r></w:p></w:body></w:document>`
	many := map[string]string{"word/document.xml": docxXML}
	for i := range 10001 {
		many["x/"+strconv.Itoa(i)] = ""
	}
	for name, content := range map[string][]byte{
		"bomb.docx": officeZip(t, map[string]string{"word/document.xml": bomb}),
		"many.docx": officeZip(t, many),
		"ok.docx":   officeZip(t, map[string]string{"word/document.xml": docxXML}),
	} {
		e.write(zoneDir+name, string(content))
	}
	r := e.post("shed_search", map[string]any{"query": "needle", "zone": "storage"}, nil)
	wantFound(t, r, "storage:ok.docx:2")
	if sk := r.Data["skipped"].(map[string]any); sk["too_large"] != 2.0 {
		t.Fatalf("skipped: %s", r.raw)
	}
}

// treeWatch records every name created or moved in under a directory tree (inotify on each
// folder): the kernel queues the events as the file system changes, so once a call has
// answered, what it created is in the queue; nothing waits on a clock.
type treeWatch struct {
	fd   int
	dirs map[int]string
}

func watchTree(t *testing.T, root string) *treeWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("no inotify: %v", err)
	}
	w := &treeWatch{fd: fd, dirs: map[int]string{}}
	t.Cleanup(func() { unix.Close(fd) })
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		wd, err := unix.InotifyAddWatch(fd, p, unix.IN_CREATE|unix.IN_MOVED_TO)
		w.dirs[wd] = p
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// created is every path created since the watch began (or the last call).
func (w *treeWatch) created(t *testing.T) []string {
	t.Helper()
	var out []string
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(w.fd, buf)
		if err == unix.EAGAIN {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			out = append(out, filepath.Join(w.dirs[int(ev.Wd)], name))
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// TestSearchEncryptedZoneNoPlaintextOnDisk: in an encrypted Storage and Uploads, text, PDF
// and office files are searched decrypted as a stream in memory: while the search runs no
// file or folder is created anywhere under the storage directory (its working folder of
// decrypted copies included), the PDF text is not cached, and no file on disk holds the
// plaintext afterwards.
func TestSearchEncryptedZoneNoPlaintextOnDisk(t *testing.T) {
	t.Parallel()
	needPoppler(t)
	const secret = "needle-7f3a-secret"
	d := newPDF()
	d.textPage("cover")
	d.textPage("the " + secret + " in a pdf")
	e := sealedZone(t, nil, func(e *env) {
		e.write(zoneDir+"notes/a.txt", "one\nthe "+secret+" in text\n")
		e.write(zoneDir+"notes/report.pdf", string(d.bytes()))
		e.write(zoneDir+"notes/b.docx", string(officeZip(t, map[string]string{"word/document.xml": strings.ReplaceAll(docxXML, "The ne</w:t></w:r><w:r><w:t xml:space=\"preserve\">edle", secret)})))
		e.write("users/local/Uploads/c1/up.txt", "uploaded "+secret+"\n")
	})
	for _, f := range []string{zoneDir + "notes/a.txt", zoneDir + "notes/report.pdf", "users/local/Uploads/c1/up.txt"} {
		e.sealedOnDisk(f, secret)
	}
	// Every zone's (empty) folder exists first: resolving a zone makes its layout, for every
	// tool alike; that is not what this test watches.
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "documents"}, nil))
	w := watchTree(t, e.base)
	r := e.post("shed_search", map[string]any{"query": secret}, map[string]string{"X-OpenWebUI-Chat-Id": "c1"})
	wantFound(t, r, "uploads:up.txt:1", "storage:notes/a.txt:2", "storage:notes/b.docx:2", "storage:notes/report.pdf:2.1")
	if made := w.created(t); len(made) > 0 {
		t.Fatalf("the search created on disk: %q", made)
	}
	err := filepath.WalkDir(e.base, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secret)) {
			t.Errorf("plaintext on disk: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The watch sees what a search writes: a PDF of Documents (not encrypted) has its text
	// cached in the working folder.
	e.write("users/local/Documents/data/open.pdf", string(textPDF(1, "public")))
	wantFound(t, e.post("shed_search", map[string]any{"query": "public", "zone": "documents"}, nil), "documents:open.pdf:1.1")
	if made := w.created(t); !slices.ContainsFunc(made, func(p string) bool { return strings.HasPrefix(p, filepath.Join(e.base, ".plain")) }) {
		t.Fatalf("the watch saw no working folder made for the cache: %q", made)
	}
}
