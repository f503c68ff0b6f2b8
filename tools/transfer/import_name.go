package transfer

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxImportName bounds an imported file's name in bytes, leaving room under NAME_MAX (255)
// for a " (NNN)" dedupe suffix.
const maxImportName = 200

// importName turns an uploaded file's name (untrusted: Open WebUI keeps what the browser
// sent) into one safe file name: NFC; the last component only (no '/' or '\'); control
// and format characters (NUL, newline, bidi overrides) replaced by '_'; no leading '.',
// '-' or space (no hidden files, no option-like names, never ".", ".." or ".git"); at
// most maxImportName bytes, keeping the extension. fallback (the file id) is used when
// nothing is left.
func importName(name, fallback string) string {
	name = norm.NFC.String(strings.ToValidUTF8(name, "_"))
	name = strings.TrimRight(strings.ReplaceAll(name, `\`, "/"), "/")
	name = name[strings.LastIndex(name, "/")+1:]
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return '_'
		}
		return r
	}, name)
	name = strings.TrimLeft(strings.TrimSpace(name), ".- ")
	if strings.Trim(name, "_") == "" {
		name = "file-" + strings.Map(func(r rune) rune {
			if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_') {
				return r
			}
			return -1
		}, fallback)
		if name == "file-" {
			name = "upload"
		}
	}
	if len(name) > maxImportName {
		ext := path.Ext(name)
		if len(ext) > 20 {
			ext = ""
		}
		stem := name[:maxImportName-len(ext)]
		for !utf8.ValidString(stem) {
			stem = stem[:len(stem)-1]
		}
		name = stem + ext
	}
	return name
}

// dedupeName is the n-th candidate for name when it is taken: "report (2).pdf".
func dedupeName(name string, n int) string {
	if n == 1 {
		return name
	}
	ext := path.Ext(name)
	if ext == name {
		ext = ""
	}
	return fmt.Sprintf("%s (%d)%s", strings.TrimSuffix(name, ext), n, ext)
}
