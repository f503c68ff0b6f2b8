package archive

import (
	"bytes"
	"io"
)

// SniffLen is how many leading bytes Sniff needs (the tar magic sits at offset 257).
const SniffLen = 265

// signatures are the formats that people mistake for zip archives, by leading bytes.
var signatures = []struct {
	kind  string
	magic []byte
}{
	{"gzip", []byte{0x1f, 0x8b}},
	{"bzip2", []byte("BZh")},
	{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0}},
	{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd}},
	{"7z", []byte{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c}},
	{"rar", []byte("Rar!\x1a\x07")},
	{"pdf", []byte("%PDF")},
}

// zipMagic are the signatures a zip file starts with: a local file header, an empty
// archive's end record, or a spanned archive's marker.
var zipMagic = [][]byte{[]byte("PK\x03\x04"), []byte("PK\x05\x06"), []byte("PK\x07\x08")}

// Sniff names the format of a file from its first bytes: "zip", "empty", "tar", "gzip",
// "bzip2", "xz", "zstd", "7z", "rar", "pdf", or "unknown".
func Sniff(head []byte) string {
	if len(head) == 0 {
		return "empty"
	}
	for _, m := range zipMagic {
		if bytes.HasPrefix(head, m) {
			return "zip"
		}
	}
	for _, s := range signatures {
		if bytes.HasPrefix(head, s.magic) {
			return s.kind
		}
	}
	if len(head) >= 262 && bytes.Equal(head[257:262], []byte("ustar")) {
		return "tar"
	}
	return "unknown"
}

// sniffAt reads the head of r and refuses anything that is not a zip archive with a
// FormatError naming what it is.
func sniffAt(r io.ReaderAt, size int64) error {
	head := make([]byte, min(size, SniffLen))
	if _, err := r.ReadAt(head, 0); err != nil && err != io.EOF {
		return &FormatError{Reason: "cannot read the file: " + err.Error()}
	}
	switch kind := Sniff(head); kind {
	case "zip":
		return nil
	case "empty":
		return &FormatError{Kind: kind, Reason: "the file is empty, not a ZIP archive"}
	case "unknown":
		return &FormatError{Kind: kind, Reason: "the file is not a ZIP archive (no ZIP signature at its start)"}
	default:
		return &FormatError{Kind: kind, Reason: "the file is a " + kind + " file, not a ZIP archive"}
	}
}
