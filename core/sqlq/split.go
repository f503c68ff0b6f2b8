package sqlq

import (
	"errors"
	"strings"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrMultiple is returned for a query holding more than one statement.
var ErrMultiple = errors.New("more than one SQL statement")

// ErrEmpty is returned for a query holding no statement: only white space, comments and
// semicolons (SQLite would prepare no statement from it).
var ErrEmpty = errors.New("no SQL statement (only comments, ';' or white space)")

// errTooManySemicolons refuses a query whose first statement cannot be found within
// maxSemicolons candidate ends (bounds the work of the split).
var errTooManySemicolons = errors.New("too many ';' before the end of the first statement")

const maxSemicolons = 1000

// Single returns the one statement of query, without a leading byte-order mark and
// without what follows the statement when that is only white space, comments and
// semicolons; a second statement is ErrMultiple, none at all ErrEmpty. SQLite's own
// sqlite3_complete tells where the first statement ends (so semicolons inside strings,
// identifiers, comments and trigger bodies do not count).
func Single(query string) (string, error) {
	// Why the BOM goes: editors and some clients put one before the text; SQLite reads it
	// as part of a name, and a query holding nothing else prepared no statement at all.
	query = strings.TrimPrefix(query, "\ufeff")
	if blank(query) {
		return "", ErrEmpty
	}
	if !strings.Contains(query, ";") {
		return query, nil
	}
	tls := libc.NewTLS()
	defer tls.Close()
	tried := 0
	for i := 0; i < len(query); i++ {
		if query[i] != ';' {
			continue
		}
		if tried++; tried > maxSemicolons {
			return "", errTooManySemicolons
		}
		complete, err := isComplete(tls, query[:i+1])
		if err != nil {
			return "", err
		}
		if !complete {
			continue
		}
		if !blank(query[i+1:]) {
			return "", ErrMultiple
		}
		return query[:i+1], nil
	}
	return query, nil
}

// isComplete is sqlite3_complete(s).
func isComplete(tls *libc.TLS, s string) (bool, error) {
	cs, err := libc.CString(s)
	if err != nil {
		return false, err
	}
	defer libc.Xfree(tls, cs)
	return sqlite3.Xsqlite3_complete(tls, cs) != 0, nil
}

// blank reports whether s holds only white space, semicolons and comments.
func blank(s string) bool {
	for len(s) > 0 {
		switch {
		case s[0] == ';' || s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' || s[0] == '\f' || s[0] == '\v':
			s = s[1:]
		case strings.HasPrefix(s, "--"):
			_, rest, ok := strings.Cut(s, "\n")
			if !ok {
				return true
			}
			s = rest
		case strings.HasPrefix(s, "/*"):
			_, rest, ok := strings.Cut(s[2:], "*/")
			if !ok {
				return true
			}
			s = rest
		default:
			return false
		}
	}
	return true
}
