package confine

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits taken from Linux (PATH_MAX, NAME_MAX), in bytes.
const (
	MaxPathLen = 4096 // longest accepted path, before and after normalisation
	MaxNameLen = 255  // longest accepted path component
)

// Clean validates and normalises a model-supplied zone-relative path lexically
// and returns the slash-joined clean path; "" is the zone root.
//
//   - "" and "." are the root; empty and "." components are dropped;
//   - backslashes are separators ("a\\b" is "a/b");
//   - the path is put in Unicode NFC, so "é" typed either way names one file;
//   - an inner ".." pops the previous component; one that climbs above the
//     root is ErrEscape;
//   - absolute paths ("/x", "//x", "\\\\server\\x") and Windows drive paths
//     (a first component starting with a letter and a colon: "C:\\x", "C:/x",
//     "C:x") are ErrEscape;
//   - control characters (NUL, newline, DEL, C1), invalid UTF-8, a component
//     over MaxNameLen bytes or a path over MaxPathLen bytes are ErrInvalid;
//   - nothing is decoded: "%2e%2e" and "~" are literal names.
//
// Clean is purely lexical: symlinks are the business of Fs.
func Clean(p string) (string, error) {
	c, err := clean(p)
	if err != nil {
		return "", &PathError{Op: "clean", Path: p, Err: err}
	}
	return c, nil
}

func clean(p string) (string, error) {
	// Why the length check comes first: it bounds the work done on hostile input.
	if len(p) > MaxPathLen {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrInvalid, MaxPathLen)
	}
	if err := checkRunes(p); err != nil {
		return "", err
	}
	p = norm.NFC.String(p)
	if len(p) > MaxPathLen {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrInvalid, MaxPathLen)
	}
	// Why backslashes are separators: a model trained on Windows paths must not
	// smuggle "..\\..\\x" past the ".." check as a single odd file name.
	p = strings.ReplaceAll(p, `\`, "/")
	if strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("%w: absolute path", ErrEscape)
	}
	parts, err := components(p)
	if err != nil {
		return "", err
	}
	// Checked on the result so that "a/../C:/x" cannot become "C:/x".
	if len(parts) > 0 && isDrive(parts[0]) {
		return "", fmt.Errorf("%w: Windows drive path", ErrEscape)
	}
	return strings.Join(parts, "/"), nil
}

// checkRunes refuses invalid UTF-8 and control characters. Why: NUL truncates
// names in C, newlines forge lines in listings and logs, and invalid UTF-8
// cannot be shown back to the model faithfully.
func checkRunes(p string) error {
	for i, r := range p {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(p[i:]); size == 1 {
				return fmt.Errorf("%w: not valid UTF-8", ErrInvalid)
			}
		}
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: control character %U", ErrInvalid, r)
		}
	}
	return nil
}

// components splits a relative slash path, dropping "" and "." and applying "..".
func components(p string) ([]string, error) {
	parts := make([]string, 0, strings.Count(p, "/")+1)
	for c := range strings.SplitSeq(p, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(parts) == 0 {
				return nil, fmt.Errorf("%w: \"..\" climbs above the zone root", ErrEscape)
			}
			parts = parts[:len(parts)-1]
		default:
			if len(c) > MaxNameLen {
				return nil, fmt.Errorf("%w: a component is longer than %d bytes", ErrInvalid, MaxNameLen)
			}
			parts = append(parts, c)
		}
	}
	return parts, nil
}

// isDrive reports whether a component starts like a Windows drive ("C:").
func isDrive(c string) bool {
	return len(c) >= 2 && c[1] == ':' && ('a' <= c[0] && c[0] <= 'z' || 'A' <= c[0] && c[0] <= 'Z')
}
