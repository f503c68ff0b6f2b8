package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/textcap"
)

// FileTypeInput is the input of shed_file_type.
type FileTypeInput struct {
	core.ZoneArgs
	Path string `json:"path" required:"true"`
}

// magics are the original's signatures, checked in this order (reference §5.23).
var magics = []struct {
	sig  string
	name string
}{
	{"\x89PNG\r\n\x1a\n", "PNG image"}, {"\xff\xd8\xff", "JPEG image"}, {"GIF87a", "GIF image (87a)"},
	{"GIF89a", "GIF image (89a)"}, {"PK\x03\x04", "ZIP archive (or DOCX/XLSX/PPTX/JAR)"},
	{"PK\x05\x06", "ZIP archive (empty)"}, {"%PDF", "PDF document"}, {"\x7fELF", "ELF executable"},
	{"#!", "Script (shebang)"}, {"\x1f\x8b", "Gzip compressed"}, {"BZ", "Bzip2 compressed"},
	{"\xfd7zXZ", "XZ compressed"}, {"Rar!", "RAR archive"}, {"7z\xbc\xaf", "7-Zip archive"},
	{"\x00\x00\x00\x1cftyp", "MP4/MOV video"}, {"\x00\x00\x00\x20ftyp", "MP4 video"},
	{"ID3", "MP3 audio (ID3)"}, {"\xff\xfb", "MP3 audio"}, {"OggS", "Ogg container"},
	{"RIFF", "RIFF container (WAV/AVI)"}, {"SQLite format 3", "SQLite database"},
}

// errDirectory tells FileType that openRegular met a directory (an answer, not a failure).
var errDirectory = errors.New("directory")

// compressions maps a last extension to the content encoding Python's mimetypes reports.
var compressions = map[string]string{".gz": "gzip", ".Z": "compress", ".bz2": "bzip2", ".xz": "xz", ".br": "br"}

// FileType answers shed_file_type (reference §5.23): the original's fields (mime, encoding,
// magic, extension, size, size_human) from the first 8 KB only, plus a summary the model
// can act on: kind (text, binary or empty: exactly what shed_read will decide),
// text_encoding and line_endings. mime comes from the content (mimetype), not the name.
func (s *Tools) FileType(ctx context.Context, c core.Caller, in FileTypeInput) (core.Result, error) {
	o, err := s.OpenRead(ctx, c, in.ZoneArgs, in.Path, func(*core.Zone, string) error { return errDirectory })
	if errors.Is(err, errDirectory) {
		shown, _ := confine.Clean(in.Path) // it passed zonePath
		if shown == "" {
			shown = "."
		}
		return core.Result{Data: directoryType{MIME: "inode/directory", Path: shown, Type: "directory"}, Message: "Directory"}, nil
	}
	if err != nil {
		return core.Result{}, err
	}
	defer o.Close()
	rel, f, info := o.Rel, o.F, o.Info
	sample, err := readSample(o.Z, f, in.Path)
	if err != nil {
		return core.Result{}, err
	}
	ext := path.Ext(path.Base(rel))
	if ext == path.Base(rel) { // ".bashrc" has no extension, as in Python's Path.suffix
		ext = ""
	}
	data := fileType{Extension: ext, Kind: "text", Magic: magic(sample), MIME: core.DetectMIME(sample), Path: rel,
		Size: info.Size(), SizeHuman: core.HumanSize(info.Size())}
	if e, ok := compressions[ext]; ok {
		data.Encoding = &e
	}
	if s.CheckSize(info.Size()) == nil {
		// The content hash (expected_hash of a write): the sample, then the rest of the file
		// streamed once; a file over max_file_size_mb, which no write takes, has none, and
		// so has one whose rest cannot be read (an encrypted file damaged past its start):
		// its type is known from the sample all the same, and shed_read names the damage.
		sum := core.NewContentHash()
		_, _ = sum.Write(sample)
		if _, err := io.Copy(sum, f); err == nil {
			data.Hash = sum.Sum()
		}
	}
	switch {
	case len(sample) == 0:
		data.Kind, data.Magic = "empty", "Empty file"
	case textcap.LooksBinary(sample):
		data.Kind = "binary"
	default:
		te, le := textEncoding(sample), textcap.LineEndings(sample)
		data.TextEncoding, data.LineEndings = &te, &le
	}
	msg := data.Magic
	if bytes.HasPrefix(sample, []byte(core.SqliteMagic)) {
		msg += ": query it with shed_sqlite (SELECT name FROM sqlite_master lists its tables)"
	}
	if isPDF(sample) {
		// Best effort: the type is known whatever the PDF engine says. pdfinfo runs
		// within a command's budget, on the decrypted copy in an encrypted zone.
		var pi pdfInfo
		err := s.pdfCall(ctx, c, o.Z, rel, func(ctx context.Context, z *core.Zone, dir core.ReadFs) (err error) {
			pi, err = s.pdfInfoOf(ctx, z, dir, rel)
			return err
		})
		if err == nil {
			data.PageCount, data.PDFEncrypted = &pi.pages, &pi.encrypted
			msg += fmt.Sprintf(", %d pages", pi.pages)
		} else if e, ok := core.AsError(err); ok {
			data.PDFError = e.Code
		}
	}
	return core.Result{Data: data, Message: msg}, nil
}

// directoryType is the answer of shed_file_type for a folder (fields in the order of the
// JSON keys, alphabetical).
type directoryType struct {
	MIME string `json:"mime"`
	Path string `json:"path"`
	Type string `json:"type"`
}

// fileType is the answer of shed_file_type for a file (fields in the order of the JSON
// keys, alphabetical, as the map it replaces wrote them). encoding, line_endings and
// text_encoding are null when they do not apply (always written); page_count and
// pdf_encrypted when pdfinfo read a PDF, pdf_error when it could not.
type fileType struct {
	Encoding     *string   `json:"encoding"`
	Extension    string    `json:"extension"`
	Hash         string    `json:"hash,omitempty"`
	Kind         string    `json:"kind"`
	LineEndings  *string   `json:"line_endings"`
	Magic        string    `json:"magic"`
	MIME         string    `json:"mime"`
	PageCount    *int64    `json:"page_count,omitempty"`
	Path         string    `json:"path"`
	PDFEncrypted *bool     `json:"pdf_encrypted,omitempty"`
	PDFError     core.Code `json:"pdf_error,omitempty"`
	Size         int64     `json:"size"`
	SizeHuman    string    `json:"size_human"`
	TextEncoding *string   `json:"text_encoding"`
}

// magic names the content by the original's signature table, else "Text file (UTF-8)" when
// the first 1024 bytes are UTF-8 (a character cut at byte 1024 does not count against it).
func magic(sample []byte) string {
	for _, m := range magics {
		if bytes.HasPrefix(sample, []byte(m.sig)) {
			return m.name
		}
	}
	if validPrefix(sample[:min(len(sample), 1024)], len(sample) > 1024) {
		return "Text file (UTF-8)"
	}
	return "Binary file"
}

// validPrefix reports whether b is UTF-8, allowing an incomplete last character when b was
// cut from a longer stream.
func validPrefix(b []byte, cut bool) bool {
	if utf8.Valid(b) {
		return true
	}
	if !cut {
		return false
	}
	for k := 1; k < utf8.UTFMax && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			return !utf8.FullRune(b[len(b)-k:]) && utf8.Valid(b[:len(b)-k])
		}
	}
	return false
}

// textEncoding names the encoding of a text sample: a BOM wins, then ascii, utf-8, and
// "unknown (not UTF-8)" for other 8-bit encodings (Latin-1, Windows-1252...).
func textEncoding(sample []byte) string {
	switch {
	case bytes.HasPrefix(sample, []byte("\xef\xbb\xbf")):
		return "utf-8 (BOM)"
	case !bytes.ContainsFunc(sample, func(r rune) bool { return r >= utf8.RuneSelf }):
		return "ascii"
	case validPrefix(sample, len(sample) == textcap.SniffLen):
		return "utf-8"
	}
	return "unknown (not UTF-8)"
}
