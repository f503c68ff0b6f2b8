package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/crypt"
	"github.com/gabriel-vasile/mimetype"
	"github.com/spf13/afero"
)

// FileKind names a non-regular file type for messages.
func FileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// ReadDirError is the error of shed_read and shed_read_bytes for a directory (reference §5.5).
func ReadDirError(z *Zone, p string) error {
	return Errf(NotAFile, "Path is a directory: %s", p).With("path", p).With("zone", z.Label).
		WithHint("List a folder with shed_tree; read a file inside it with shed_read")
}

// Opened is a zone file open for reading: its zone, clean path, descriptor and metadata.
type Opened struct {
	Z    *Zone
	Rel  string
	F    afero.File
	Info os.FileInfo
}

func (o *Opened) Close() {
	_ = o.F.Close()
	o.Z.Close()
}

// OpenRead is the preamble of the read tools: resolve the zone (Uploads allowed), validate
// the path and open a regular file (isDir answers a directory). Close the result.
func (s *Service) OpenRead(ctx context.Context, c Caller, za ZoneArgs, p string, isDir func(*Zone, string) error) (*Opened, error) {
	z, rel, err := s.ZonePath(ctx, c, za, p, false)
	if err != nil {
		return nil, err
	}
	f, info, err := OpenRegular(z, rel, p, isDir)
	if err != nil {
		z.Close()
		return nil, err
	}
	return &Opened{Z: z, Rel: rel, F: f, Info: info}, nil
}

// OpenRegular opens a zone file for reading and checks, on the open descriptor, that it is
// a regular file: a directory answers isDir's error, anything else (FIFO, socket, device)
// NOT_A_FILE. Why O_NONBLOCK and fstat rather than stat then open: a FIFO planted in the
// zone (mkfifo under shed_exec) would block a plain open forever, and a stat-then-open pair
// races with a rename; for regular files O_NONBLOCK changes nothing.
func OpenRegular(z *Zone, rel, shown string, isDir func(*Zone, string) error) (afero.File, os.FileInfo, error) {
	f, err := z.fs.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, OpenError(err, z, shown)
	}
	info, err := f.Stat()
	switch {
	case err != nil:
		_ = f.Close()
		return nil, nil, Errf(InternalError, "Cannot inspect %s", shown).With("path", shown).Because(err)
	case info.IsDir():
		_ = f.Close()
		return nil, nil, isDir(z, shown)
	case !info.Mode().IsRegular():
		_ = f.Close()
		return nil, nil, Errf(NotAFile, "Not a regular file: %s (%s)", shown, FileKind(info.Mode())).
			With("path", shown).With("zone", z.Label).WithHint("Only regular files can be read; see shed_tree")
	}
	return f, info, nil
}

// OpenError maps an open failure on a model path: missing files (also below a file, or a
// dangling symlink inside the zone) are FILE_NOT_FOUND; escapes are PATH_ESCAPE.
func OpenError(err error, z *Zone, p string) *Error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, confine.ErrNotDir), errors.Is(err, syscall.ENOTDIR):
		return Errf(FileNotFound, "File not found: %s", p).With("path", p).With("zone", z.Label)
	case errors.Is(err, syscall.ELOOP):
		return Errf(InvalidPath, "Too many levels of symbolic links: %s", p).With("path", p).With("zone", z.Label).Because(err).
			WithHint("The path goes through a symlink loop: check it with shed_tree")
	}
	return PathError(err, z, p)
}

// ReadFail is the error of a read that failed midway: DECRYPTION_FAILED (or
// INVALID_ENCRYPTED_FILE) for an altered encrypted file, else INTERNAL_ERROR.
func ReadFail(err error, z *Zone, p string) *Error {
	if errors.Is(err, crypt.ErrAuth) || errors.Is(err, crypt.ErrFormat) {
		return PathError(err, z, p)
	}
	return Errf(InternalError, "Cannot read %s", p).With("path", p).Because(err)
}

// SqliteMagic starts every SQLite database file.
const SqliteMagic = "SQLite format 3\x00"

// DetectMIME is the content's media type without parameters ("text/plain").
func DetectMIME(sample []byte) string {
	m, _, _ := strings.Cut(mimetype.Detect(sample).String(), ";")
	return m
}

// HumanSize renders a size as the original's file_type does: "1.50 MB", "2.0 KB", "12 B".
func HumanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// ClipText cuts s to at most n bytes on a character boundary.
func ClipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
