package search

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"path"
	"strings"

	"github.com/fileshed/fileshed/core/archive"
)

// Office documents are zips of XML: their text is read from one entry with the standard
// library (archive/zip, encoding/xml token by token), bounded like shed_unzip: the number
// of entries (archive.max_entries), the bytes the entry expands to (officeMaxXML, checked on
// the bytes actually decompressed: headers can lie) and its expansion ratio
// (archive.max_ratio, above 1 MiB), and the text kept (officeMaxText). encoding/xml expands
// no entity it is not given (no DTD, no external entity), so no entity bomb either.

const (
	// officeMaxFile is the largest office file read (the zip itself).
	officeMaxFile = 64 << 20
	// officeMaxXML is the most bytes the text entry may expand to.
	officeMaxXML = 64 << 20
	// officeMaxText is the most text kept of one document.
	officeMaxText = 16 << 20
)

// officeEntries is the entry holding the text, per kind: a Word document's body, an
// OpenDocument's content, a workbook's shared strings (the text of its cells).
var officeEntries = map[string]string{"docx": "word/document.xml", "odt": "content.xml", "xlsx": "xl/sharedStrings.xml"}

// zipMagic starts a zip's first local header.
var zipMagic = []byte("PK\x03\x04")

// officeKind is the office format of a file (by its name, when it is a zip): "docx", "odt",
// "xlsx", or "".
func officeKind(rel string, sample []byte) string {
	kind := strings.TrimPrefix(strings.ToLower(path.Ext(rel)), ".")
	if _, ok := officeEntries[kind]; !ok || !bytes.HasPrefix(sample, zipMagic) {
		return ""
	}
	return kind
}

// errTooLarge is a file over a bound of the search (counted, not searched).
var errTooLarge = errors.New("over the search's bounds")

// officeLimits are the archive valves that bound an office file.
type officeLimits struct {
	maxEntries int
	maxRatio   int64
}

// officeText reads the text of an office document of kind from r (size bytes): one line per
// paragraph (docx, odt) or shared string (xlsx).
func officeText(r io.ReaderAt, size int64, kind string, lim officeLimits) ([]byte, error) {
	if size > officeMaxFile {
		return nil, errTooLarge
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, err
	}
	if len(zr.File) > lim.maxEntries {
		return nil, errTooLarge
	}
	for _, f := range zr.File {
		if f.Name != officeEntries[kind] {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		in := &ratioReader{r: io.LimitReader(rc, officeMaxXML+1), packed: int64(f.CompressedSize64), ratio: lim.maxRatio}
		return xmlText(in, kind)
	}
	return nil, nil // no text entry: an empty document, a workbook of numbers
}

// ratioReader stops with errTooLarge when the bytes read pass officeMaxXML, or pass the
// ratio to the compressed size (beyond archive.RatioFloor).
type ratioReader struct {
	r         io.Reader
	n, packed int64
	ratio     int64
}

func (r *ratioReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	if r.n > officeMaxXML || (r.n > archive.RatioFloor && r.n > r.ratio*max(r.packed, 1)) {
		return n, errTooLarge
	}
	return n, err
}

// xmlText is the text of the XML of an office document of kind.
func xmlText(r io.Reader, kind string) ([]byte, error) {
	d := xml.NewDecoder(r)
	var out bytes.Buffer
	depth := 0 // inside elements whose character data is text
	for out.Len() <= officeMaxText {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			text, sep := officeElement(kind, t.Name, true)
			if text {
				depth++
			}
			out.WriteString(sep)
		case xml.EndElement:
			text, sep := officeElement(kind, t.Name, false)
			if text && depth > 0 {
				depth--
			}
			out.WriteString(sep)
		case xml.CharData:
			if depth > 0 {
				out.Write(t)
			}
		}
	}
	return out.Bytes(), nil
}

// officeElement says, for an element of kind's XML opening (start) or closing, whether it
// holds text and what it adds to the text (a tab, a line break).
func officeElement(kind string, n xml.Name, start bool) (text bool, sep string) {
	switch kind {
	case "docx": // w:t runs of text in w:p paragraphs
		switch {
		case n.Local == "t":
			return true, ""
		case start && n.Local == "tab":
			return false, "\t"
		case start && (n.Local == "br" || n.Local == "cr"):
			return false, "\n"
		case !start && n.Local == "p":
			return false, "\n"
		}
	case "odt": // text:p and text:h hold their text, spans included
		if n.Space != "text" {
			return false, ""
		}
		switch {
		case n.Local == "p" || n.Local == "h":
			if start {
				return true, ""
			}
			return true, "\n"
		case start && n.Local == "s":
			return false, " "
		case start && n.Local == "tab":
			return false, "\t"
		case start && n.Local == "line-break":
			return false, "\n"
		}
	case "xlsx": // si items of t runs
		switch {
		case n.Local == "t":
			return true, ""
		case !start && n.Local == "si":
			return false, "\n"
		}
	}
	return false, ""
}
