package search

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core"
)

// A match is a line (grep's unit): a line matches when the query occurs in it. The matcher
// finds the first matching line in a buffer of whole lines, so that each file is read once
// and matched chunk by chunk, never line by line through a function call per line:
//
//   - a literal, case-sensitive: bytes.Index (vectorised);
//   - a literal, case-insensitive, ASCII: the rarest byte of the query found in both cases
//     with bytes.IndexByte, each candidate checked in place (ASCII folding); a query with
//     other characters goes through the regexp engine with (?i) (Unicode folding);
//   - a regex (RE2, linear time): made unable to match a newline ('.' with s, [^x], \s),
//     so that no match crosses a line, then run on the whole buffer; when every match
//     must contain a literal, the literal is searched first and the regex runs on its
//     lines only; a regex using \A or \z (start or end of the line, for grep) runs on
//     each line alone.

// matcher finds matching lines.
type matcher interface {
	// find returns the bounds [start, end) of the first match in b (whole lines, or a
	// window of one long line), or start = -1.
	find(b []byte) (start, end int)
}

// maxQuery bounds the query (a regex's compiled size is bounded by RE2 itself).
const maxQuery = 1000

// newMatcher compiles the query; a regex RE2 refuses (backreferences, lookaround, a
// repetition count over 1000, a program too large) is INVALID_PARAMETER.
func newMatcher(query string, regex, caseSensitive bool) (matcher, error) {
	if query == "" {
		return nil, core.Errf(core.MissingParameter, "Parameter 'query' is required").With("parameter", "query").
			WithHint("Give the text to find, e.g. query='TODO'")
	}
	if len(query) > maxQuery || strings.ContainsAny(query, "\n\x00") || !utf8.ValidString(query) {
		return nil, core.Errf(core.InvalidParameter, "query must be one line of valid UTF-8 text of at most %d bytes", maxQuery).
			With("query", core.Shorten(query)).WithHint("A match is a line: search for one line's text (no newline)")
	}
	if !regex {
		if caseSensitive {
			return literal{q: []byte(query)}, nil
		}
		if isASCII(query) {
			return newFoldLiteral(query), nil
		}
		query = regexp.QuoteMeta(query)
	}
	flags := "(?m)"
	if !caseSensitive {
		flags = "(?mi)"
	}
	tree, err := syntax.Parse(flags+query, syntax.Perl)
	if err == nil {
		_, err = regexp.Compile(flags + query) // RE2's bounds on the program, on the query as given
	}
	if err != nil {
		return nil, core.Errf(core.InvalidParameter, "Invalid regex: %v", err).With("query", core.Shorten(query)).Because(err).
			WithHint("query is RE2 syntax when regex=true (no backreferences, no lookaround, repetition counts up to 1000); or search the text literally with regex=false")
	}
	tree = noNewline(tree.Simplify())
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, core.Errf(core.InternalError, "Cannot prepare the regex").Because(err)
	}
	m := &regexMatcher{re: re, perLine: usesTextBounds(tree)}
	if lit, fold := required(tree); len(lit) > 0 {
		if fold && isASCII(lit) {
			m.pre = newFoldLiteral(lit)
		} else if !fold {
			m.pre = literal{q: []byte(lit)}
		}
	}
	return m, nil
}

// literal is a case-sensitive literal.
type literal struct{ q []byte }

func (l literal) find(b []byte) (int, int) {
	i := bytes.Index(b, l.q)
	if i < 0 {
		return -1, -1
	}
	return i, i + len(l.q)
}

// foldLiteral is an ASCII literal matched without regard to ASCII case.
type foldLiteral struct {
	q      []byte // lower case
	pivot  int    // index in q of its rarest byte
	lo, up byte   // that byte in both cases
}

func newFoldLiteral(s string) foldLiteral {
	q := []byte(strings.ToLower(s))
	pivot := 0
	for i, c := range q {
		if rank(c) < rank(q[pivot]) {
			pivot = i
		}
	}
	c := q[pivot]
	return foldLiteral{q: q, pivot: pivot, lo: c, up: upper(c)}
}

func (f foldLiteral) find(b []byte) (int, int) {
	n := len(f.q)
	// Candidates: each place the pivot byte occurs, in either case; nextLo and nextUp hold
	// the next occurrence of each case found so far (-2: not searched yet, -1: none left).
	from, nextLo, nextUp := f.pivot, -2, -2
	for from <= len(b)-(n-f.pivot) {
		if nextLo != -1 && nextLo < from {
			if nextLo = bytes.IndexByte(b[from:], f.lo); nextLo >= 0 {
				nextLo += from
			}
		}
		if f.up != f.lo && nextUp != -1 && nextUp < from {
			if nextUp = bytes.IndexByte(b[from:], f.up); nextUp >= 0 {
				nextUp += from
			}
		}
		at := nextLo
		if f.up != f.lo && nextUp >= 0 && (at < 0 || nextUp < at) {
			at = nextUp
		}
		if at < 0 {
			return -1, -1
		}
		start := at - f.pivot
		if start+n <= len(b) && equalFold(b[start:start+n], f.q) {
			return start, start + n
		}
		from = at + 1
	}
	return -1, -1
}

// equalFold reports whether s equals the lower-case ASCII q, ignoring ASCII case.
func equalFold(s, q []byte) bool {
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != q[i] {
			return false
		}
	}
	return true
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// rank orders bytes from rare (low) to frequent in text: letters by their frequency in
// English, then digits, space and the common punctuation; the pivot of a folded literal is
// its rarest byte, so that candidates are few.
func rank(c byte) int {
	const frequent = "etaoinsrhldcumfpgwybvkxjqz" // e is the most frequent, z the rarest
	switch {
	case c == ' ':
		return 300
	case 'a' <= c && c <= 'z':
		return 200 - 4*strings.IndexByte(frequent, c)
	case '0' <= c && c <= '9':
		return 120
	case strings.IndexByte(".,-_/:;()'\"=\t", c) >= 0:
		return 180
	}
	return 50
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// regexMatcher is an RE2 regex compiled in multi-line mode (^ and $ at line bounds).
type regexMatcher struct {
	re *regexp.Regexp
	// pre finds a literal every match contains: the regex runs only on its lines.
	pre matcher
	// perLine: the regex uses \A or \z, which mean "start/end of the line" for grep: it runs
	// on each line alone.
	perLine bool
}

func (m *regexMatcher) find(b []byte) (int, int) {
	if m.pre == nil && !m.perLine {
		loc := m.re.FindIndex(b) // no match crosses a line: see noNewline
		if loc == nil {
			return -1, -1
		}
		return loc[0], loc[1]
	}
	for p := 0; p < len(b); {
		s := p
		if m.pre != nil {
			i, _ := m.pre.find(b[p:])
			if i < 0 {
				return -1, -1
			}
			s = p + i
		}
		ls, le := lineBounds(b, s)
		if loc := m.re.FindIndex(b[ls:le]); loc != nil {
			return ls + loc[0], ls + loc[1]
		}
		p = le + 1
	}
	return -1, -1
}

// lineBounds is the line of b holding offset i: [start, end), end at its '\n' or len(b).
func lineBounds(b []byte, i int) (start, end int) {
	start = bytes.LastIndexByte(b[:i], '\n') + 1
	end = bytes.IndexByte(b[i:], '\n')
	if end < 0 {
		return start, len(b)
	}
	return start, i + end
}

// required is a literal that every match of the simplified regex tree contains ("" when
// none is certain), and whether it is case-folded.
func required(re *syntax.Regexp) (lit string, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		fold = re.Flags&syntax.FoldCase != 0
		if !fold {
			return string(re.Rune), false
		}
		// RE2 folds k and s with the Kelvin sign and the long s, which ASCII folding
		// does not see: the longest part without them is what is certain.
		for _, part := range strings.FieldsFunc(string(re.Rune), func(r rune) bool { return strings.ContainsRune("kKsS", r) }) {
			if len(part) > len(lit) {
				lit = part
			}
		}
		return lit, true
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if l, f := required(sub); len(l) > len(lit) {
				lit, fold = l, f
			}
		}
	}
	return lit, fold
}

// usesTextBounds reports whether the tree holds \A or \z (OpBeginText, OpEndText).
func usesTextBounds(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	for _, sub := range re.Sub {
		if usesTextBounds(sub) {
			return true
		}
	}
	return false
}

// noNewline makes every part of the tree unable to match a newline ('.' with the s flag,
// classes such as [^a] or \s, a literal newline), so that no match crosses a line and the
// regex runs on whole buffers, as grep's line semantics want.
func noNewline(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpCharClass:
		var out []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= '\n' && '\n' <= hi {
				if lo < '\n' {
					out = append(out, lo, '\n'-1)
				}
				if hi > '\n' {
					out = append(out, '\n'+1, hi)
				}
				continue
			}
			out = append(out, lo, hi)
		}
		if len(out) == 0 {
			re.Op, re.Rune = syntax.OpNoMatch, nil
		} else {
			re.Rune = out
		}
	case syntax.OpLiteral:
		if slices.Contains(re.Rune, '\n') {
			re.Op, re.Rune = syntax.OpNoMatch, nil
		}
	}
	for _, sub := range re.Sub {
		noNewline(sub)
	}
	return re
}
