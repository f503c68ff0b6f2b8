package confine

import (
	"errors"
	"os"
	"strconv"
	"unicode/utf8"
)

// Sentinel errors. They are always wrapped in a *PathError; test with errors.Is.
var (
	// ErrEscape reports a path that leaves the zone: ".." above the root, an
	// absolute or Windows drive path, or a symlink resolving outside (core maps
	// it to PATH_ESCAPE).
	ErrEscape = errors.New("path escapes the zone")
	// ErrInvalid reports a path that is not acceptable as a name: control
	// characters, invalid UTF-8, too long (core maps it to INVALID_PATH).
	ErrInvalid = errors.New("invalid path")
	// ErrIsDir reports a file operation aimed at a directory.
	ErrIsDir = errors.New("is a directory")
	// ErrNotDir reports a path whose parent is not a directory.
	ErrNotDir = errors.New("not a directory")
)

// PathError records a failed operation on a zone-relative path.
// Path is the zone-relative path as the caller gave it, never a host path.
type PathError struct {
	Op   string // the operation, e.g. "open", "write", "symlink"
	Path string // the zone-relative path as given
	Err  error  // a sentinel of this package or an errno; never holds a host path
}

// Error returns `op "path": cause`, with the path quoted and shortened.
func (e *PathError) Error() string {
	return e.Op + " " + quotePath(e.Path) + ": " + e.Err.Error()
}

// Unwrap returns the cause, so errors.Is(err, ErrEscape) and
// errors.Is(err, fs.ErrNotExist) work.
func (e *PathError) Unwrap() error { return e.Err }

// maxQuoted bounds how much of a path an error message repeats: the model may
// send kilobytes of junk, and the message goes back into its context.
const maxQuoted = 200

func quotePath(p string) string {
	if len(p) <= maxQuoted {
		return strconv.Quote(p)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return strconv.Quote(p[:cut]) + "..."
}

// rootEscapeText is the text of os.Root's unexported errPathEscapes. Why match
// on text: the standard library gives no exported sentinel, and a Root escape
// must become our ErrEscape (PATH_ESCAPE), not an INTERNAL_ERROR. Tests provoke
// it (symlinks pointing out), so a Go release that changes the text fails them.
const rootEscapeText = "path escapes from parent"

// bare strips the os wrappers from err. Why: *os.PathError and *os.LinkError
// produced by *os.File carry the host path, which must never reach the model.
// What remains is an errno or a sentinel; os.Root's escape error becomes ErrEscape.
func bare(err error) error {
	for {
		switch e := err.(type) {
		case *os.PathError:
			err = e.Err
		case *os.LinkError:
			err = e.Err
		case *os.SyscallError:
			err = e.Err
		default:
			if err.Error() == rootEscapeText {
				return ErrEscape
			}
			return err
		}
	}
}

// fail wraps err (nil stays nil) for the zone-relative name as given.
func fail(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &PathError{Op: op, Path: name, Err: bare(err)}
}
