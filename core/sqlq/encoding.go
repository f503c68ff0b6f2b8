package sqlq

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// utf8BOM starts files saved as "UTF-8 with BOM" (Excel's CSV UTF-8).
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// named are the encodings of the original's list, by the names Python accepts.
var named = map[string]encoding.Encoding{
	"latin-1": charmap.ISO8859_1, "latin1": charmap.ISO8859_1, "iso-8859-1": charmap.ISO8859_1, "iso8859-1": charmap.ISO8859_1,
	"cp1252": charmap.Windows1252, "windows-1252": charmap.Windows1252,
	"iso-8859-15": charmap.ISO8859_15, "latin-9": charmap.ISO8859_15,
	"utf-16":   unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM),
	"utf-16le": unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM),
	"utf-16be": unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM),
}

// decoder is a file's text encoding: the name reported and how to decode the bytes
// (nil: UTF-8, checked record by record).
type decoder struct {
	name string
	enc  encoding.Encoding
	bom  bool // a UTF-8 BOM to drop
}

// pickEncoding resolves the encoding parameter, or detects it from the file's first bytes
// when empty: a BOM wins (utf-8-sig, utf-16), then utf-8 when the sample is valid UTF-8
// (a character cut at the end of a full sample does not count), else cp1252 when the sample
// holds bytes 0x80-0x9F (Windows' quotes, euro sign), else latin-1.
func pickEncoding(name string, sample []byte) (decoder, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "":
	case "utf-8", "utf8":
		return decoder{name: "utf-8", bom: bytes.HasPrefix(sample, utf8BOM)}, nil
	case "utf-8-sig", "utf8-sig":
		return decoder{name: "utf-8-sig", bom: true}, nil
	default:
		if e, ok := named[n]; ok {
			return decoder{name: n, enc: e}, nil
		}
		e, err := htmlindex.Get(n)
		if err != nil {
			return decoder{}, fmt.Errorf("unknown encoding %q", name)
		}
		return decoder{name: n, enc: e}, nil
	}
	switch {
	case bytes.HasPrefix(sample, utf8BOM):
		return decoder{name: "utf-8-sig", bom: true}, nil
	case bytes.HasPrefix(sample, []byte{0xFF, 0xFE}), bytes.HasPrefix(sample, []byte{0xFE, 0xFF}):
		return decoder{name: "utf-16", enc: unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM)}, nil
	case utf8.Valid(sample) || len(sample) >= sampleSize && validUTF8Prefix(sample):
		return decoder{name: "utf-8"}, nil
	case hasC1(sample):
		return decoder{name: "cp1252", enc: charmap.Windows1252}, nil
	}
	return decoder{name: "latin-1", enc: charmap.ISO8859_1}, nil
}

// hasC1 reports bytes 0x80-0x9F, which latin-1 maps to control characters and cp1252 to
// printable ones.
func hasC1(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 && c <= 0x9F {
			return true
		}
	}
	return false
}

// validUTF8Prefix reports whether b is UTF-8 but for a last character cut short.
func validUTF8Prefix(b []byte) bool {
	if utf8.Valid(b) {
		return true
	}
	for k := 1; k < utf8.UTFMax && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			return !utf8.FullRune(b[len(b)-k:]) && utf8.Valid(b[:len(b)-k])
		}
	}
	return false
}

// reader decodes r (positioned at the file's start) to UTF-8, dropping a UTF-8 BOM.
func (d decoder) reader(r *bufio.Reader) io.Reader {
	if d.enc != nil {
		return transform.NewReader(r, d.enc.NewDecoder())
	}
	if d.bom {
		if head, _ := r.Peek(3); bytes.Equal(head, utf8BOM) {
			_, _ = r.Discard(3)
		}
	}
	return r
}
