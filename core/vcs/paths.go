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

// ignoredName reports whether a path component is one git must never store:
// ".git" in any letter case and its NTFS aliases (".git." , ".git ",
// "git~1"). git itself refuses them (CVE-2014-9390) and git fsck flags trees
// holding them; for us they are user-writable files that must never reach
// the repository.
func ignoredName(name string) bool {
	return strings.EqualFold(strings.TrimRight(name, ". "), ".git") || strings.EqualFold(name, "git~1")
}

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
