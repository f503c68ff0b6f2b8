package vcs

import (
	"path"
	"strings"
)

// cleanPath validates a work-tree-relative path and returns it cleaned, with
// "" meaning the whole work tree ("." or "./"). Absolute paths, ".." that
// climbs out and NUL bytes are refused: git could not store them and they
// would name something outside the work tree.
func cleanPath(p string) (string, error) {
	if p == "" || strings.IndexByte(p, 0) >= 0 || strings.HasPrefix(p, "/") {
		return "", &PathError{Path: p, Err: ErrInvalidPath}
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", &PathError{Path: p, Err: ErrInvalidPath}
	}
	if c == "." {
		return "", nil
	}
	return c, nil
}

// ignoredName reports whether a path component is one git must never store: a
// spelling of ".git" that git itself refuses on checkout and that git fsck flags
// (hasDotgit, CVE-2014-9390, CVE-2019-1353). The one rule here is a superset of git's
// two (is_ntfs_dotgit in path.c, is_hfs_dotgit in utf8.c):
//
//   - the backslash separates names (fsck reads tree entries that way);
//   - the code points HFS+ ignores when it compares names (zero-width joiners,
//     direction marks, the byte order mark: hfsIgnorable) are dropped;
//   - what remains is ".git" or its NTFS short name "git~1", in any letter case,
//     followed by nothing but dots and spaces (NTFS drops them) up to the end or to
//     a ":" (an NTFS alternate data stream: ".git::$INDEX_ALLOCATION" is the folder
//     itself, and git refuses every stream of it).
//
// For us they are user-writable names that must never reach the repository, nor be
// created where history is kept (core's protected paths).
func ignoredName(name string) bool {
	if plainASCII(name) { // no ignorable to drop, no backslash: the common case, without the replacer
		return dotGit(name)
	}
	for part := range strings.SplitSeq(name, `\`) {
		if dotGit(hfsIgnorable.Replace(part)) {
			return true
		}
	}
	return false
}

// plainASCII reports whether name is ASCII without a backslash (every HFS+ ignorable is
// outside ASCII).
func plainASCII(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 || name[i] == '\\' {
			return false
		}
	}
	return true
}

// dotGit is the NTFS rule of ignoredName on one name without HFS+ ignorables.
func dotGit(name string) bool {
	var rest string
	switch {
	case len(name) >= 4 && strings.EqualFold(name[:4], ".git"):
		rest = name[4:]
	case len(name) >= 5 && strings.EqualFold(name[:5], "git~1"):
		rest = name[5:]
	default:
		return false
	}
	if i := strings.IndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	return strings.Trim(rest, ". ") == ""
}

// hfsIgnorable removes the code points HFS+ drops when it compares names (git's
// next_hfs_char): U+200C-U+200F, U+202A-U+202E, U+206A-U+206F and U+FEFF.
var hfsIgnorable = strings.NewReplacer("\u200c", "", "\u200d", "", "\u200e", "", "\u200f", "",
	"\u202a", "", "\u202b", "", "\u202c", "", "\u202d", "", "\u202e", "",
	"\u206a", "", "\u206b", "", "\u206c", "", "\u206d", "", "\u206e", "", "\u206f", "", "\ufeff", "")

// ignoredPath reports whether any component of a cleaned path is ignored.
func ignoredPath(p string) bool {
	for p != "" {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return ignoredName(p)
		}
		if ignoredName(p[:i]) {
			return true
		}
		p = p[i+1:]
	}
	return false
}

// headerSafe removes the characters that would let a name, an e-mail or a
// message forge or break a commit header line.
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '<', '>', '\n', '\r', 0:
			return -1
		}
		return r
	}, s)
}

// messageSafe removes NUL, which git refuses in commit messages.
func messageSafe(s string) string {
	return strings.ReplaceAll(s, "\x00", "")
}
