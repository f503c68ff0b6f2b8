package archive

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/unicode/norm"
)

// maxComponent is the longest folder or file name a Linux file system takes (NAME_MAX).
const maxComponent = 255

// decodeName returns an entry's name as text: names not flagged UTF-8 that are not valid
// UTF-8 are read as code page 437, the encoding of zip tools that predate the flag.
func decodeName(name string, nonUTF8 bool) string {
	if nonUTF8 && !utf8.ValidString(name) {
		if s, err := charmap.CodePage437.NewDecoder().String(name); err == nil {
			return s
		}
	}
	return name
}

// cleanName turns an entry name into a clean relative slash path (NFC, no trailing slash,
// no "." or empty components) or refuses it with the rules of Go's zipinsecurepath=0:
// absolute paths, drive letters, backslashes and ".." components are escapes; control
// characters (NUL included) and invalid UTF-8 are invalid. Depth and length are checked
// against lim.
func cleanName(name string, lim Limits) (string, error) {
	if !utf8.ValidString(name) {
		return "", &NameError{Entry: name, Reason: "the name is not valid UTF-8"}
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return "", &NameError{Entry: name, Reason: "the name contains a control character"}
	}
	// Why backslashes are refused, not read as separators: "a\..\..\x" is a traversal on
	// Windows, and a file named with backslashes would be a trap for every later tool.
	if strings.Contains(name, `\`) {
		return "", &NameError{Entry: name, Reason: "the name contains a backslash", Escape: true}
	}
	if strings.HasPrefix(name, "/") {
		return "", &NameError{Entry: name, Reason: "the name is an absolute path", Escape: true}
	}
	if len(name) >= 2 && name[1] == ':' && ('a' <= name[0]|0x20 && name[0]|0x20 <= 'z') {
		return "", &NameError{Entry: name, Reason: "the name starts with a drive letter", Escape: true}
	}
	parts := make([]string, 0, strings.Count(name, "/")+1)
	for c := range strings.SplitSeq(name, "/") {
		switch {
		case c == "" || c == ".":
		case c == "..":
			return "", &NameError{Entry: name, Reason: `the name climbs out with ".."`, Escape: true}
		case len(c) > maxComponent:
			return "", &LimitError{Limit: "name_length", Entry: name, Value: int64(len(c)), Max: maxComponent}
		default:
			parts = append(parts, c)
		}
		if len(parts) > lim.MaxDepth {
			return "", &LimitError{Limit: "depth", Entry: name, Value: int64(strings.Count(name, "/") + 1), Max: int64(lim.MaxDepth)}
		}
	}
	if len(parts) == 0 {
		return "", &NameError{Entry: name, Reason: "the name is empty"}
	}
	if len(name) > lim.MaxNameLength {
		return "", &LimitError{Limit: "name_length", Entry: name, Value: int64(len(name)), Max: int64(lim.MaxNameLength)}
	}
	return norm.NFC.String(strings.Join(parts, "/")), nil
}
