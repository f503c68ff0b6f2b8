package handlers_test

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// needPoppler skips a test when the PDF engine is absent (CI installs it).
func needPoppler(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"pdftotext", "pdfinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: apt-get install poppler-utils", tool)
		}
	}
}

// pdfDoc builds real PDF files object by object: a catalog (1), a page tree (2), a
// Helvetica font (3), then whatever the test adds; bytes writes a correct xref table.
type pdfDoc struct {
	objs    []string // objs[i] is object i+1
	kids    []int
	encrypt string // an /Encrypt dictionary for the trailer
}

func newPDF() *pdfDoc {
	return &pdfDoc{objs: []string{"<</Type/Catalog/Pages 2 0 R>>", "", "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>"}}
}

// add appends an object and returns its number.
func (d *pdfDoc) add(body string) int {
	d.objs = append(d.objs, body)
	return len(d.objs)
}

// stream adds a content stream, FlateDecode-compressed when deflate is set.
func (d *pdfDoc) stream(data []byte, deflate bool) int {
	if !deflate {
		return d.add(fmt.Sprintf("<</Length %d>>stream\n%s\nendstream", len(data), data))
	}
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, zlib.BestCompression)
	_, _ = w.Write(data)
	_ = w.Close()
	return d.add(fmt.Sprintf("<</Length %d/Filter/FlateDecode>>stream\n%s\nendstream", b.Len(), b.Bytes()))
}

// page adds a page drawing content stream c (0: a blank page).
func (d *pdfDoc) page(c int) {
	body := "<</Type/Page/Parent 2 0 R"
	if c > 0 {
		body += fmt.Sprintf("/Contents %d 0 R", c)
	}
	d.kids = append(d.kids, d.add(body+">>"))
}

// textPage adds a page showing lines of text.
func (d *pdfDoc) textPage(lines ...string) {
	var b strings.Builder
	b.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
	for _, l := range lines {
		l = strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(l)
		fmt.Fprintf(&b, "(%s) Tj T*\n", l)
	}
	b.WriteString("ET")
	d.page(d.stream([]byte(b.String()), false))
}

// bytes renders the file.
func (d *pdfDoc) bytes() []byte {
	var kids strings.Builder
	for _, k := range d.kids {
		fmt.Fprintf(&kids, "%d 0 R ", k)
	}
	d.objs[1] = fmt.Sprintf("<</Type/Pages/Kids[%s]/Count %d/MediaBox[0 0 612 792]/Resources<</Font<</F1 3 0 R>>>>>>", kids.String(), len(d.kids))
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(d.objs))
	for i, o := range d.objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(d.objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<</Size %d/Root 1 0 R%s/ID[<0123456789abcdef0123456789abcdef><0123456789abcdef0123456789abcdef>]>>\nstartxref\n%d\n%%%%EOF\n",
		len(d.objs)+1, d.encrypt, xref)
	return b.Bytes()
}

// textPDF is a PDF of n pages, page i reading "Page i: " and the body.
func textPDF(n int, body string) []byte {
	d := newPDF()
	for i := 1; i <= n; i++ {
		d.textPage(fmt.Sprintf("Page %d: %s", i, body))
	}
	return d.bytes()
}
