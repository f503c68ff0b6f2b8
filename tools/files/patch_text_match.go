package files

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// matcher yields the matches of a pattern in a text one at a time, exactly those
// FindAllStringSubmatchIndex returns (empty matches included, an empty match right after
// a match skipped), without holding them: a pattern like `a` over a large file of a's
// would otherwise hold one index slice per byte, tens of times the file.
//
// Go's regexp has no "search from this offset" with the text before the offset as context
// (what ^, \b and \B look at). A search from pos therefore runs `from` on the text starting
// one rune earlier: `\A(?s:.)(?s:.*?)(P)` consumes that rune (so P sees it as its left
// context and never matches \A or a non-multiline ^ there), skips lazily to the leftmost
// position where P matches, and captures P's match as group 1 (P's own groups follow).
type matcher struct {
	re, from *regexp.Regexp
	text     string
	prefix   string // a literal every match starts with: the search skips to it
	all      bool
	pos      int // where the next search starts
	prevEnd  int // end of the previous match (-1: none)
	found    int
}

// searchFrom compiles the search of re's matches from an offset (see matcher). The
// pattern goes into the group as its parse tree prints it, not as written: a written
// pattern may end inside \Q, which would quote the closing parenthesis. It may still
// fail, for a pattern nested just below the parser's limit (compilePattern refuses it).
func searchFrom(re *regexp.Regexp) (*regexp.Regexp, error) {
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil, err
	}
	return regexp.Compile(`\A(?s:.)(?s:.*?)(` + tree.String() + `)`)
}

// newMatcher prepares the matches of re (from compilePattern) in text: the first one only
// unless all.
func newMatcher(re *regexp.Regexp, text string, all bool) *matcher {
	prefix, _ := re.LiteralPrefix()
	from, err := searchFrom(re)
	if err != nil {
		panic("matcher of a pattern compilePattern did not check: " + err.Error()) // a programming error
	}
	return &matcher{re: re, from: from, text: text, prefix: prefix, all: all, prevEnd: -1}
}

// next returns the next match's submatch indexes (as FindStringSubmatchIndex gives them,
// relative to the text), or nil when there is none.
func (m *matcher) next() []int {
	for (m.all || m.found == 0) && m.pos <= len(m.text) {
		at := m.find(m.pos)
		if at == nil {
			m.pos = len(m.text) + 1
			return nil
		}
		accept := true
		if at[1] == m.pos { // an empty match (the rule of regexp's allMatches)
			accept = at[0] != m.prevEnd
			_, w := utf8.DecodeRuneInString(m.text[m.pos:])
			if w == 0 {
				w = 1 // past the end
			}
			m.pos += w
		} else {
			m.pos = at[1]
		}
		m.prevEnd = at[1]
		if accept {
			m.found++
			return at
		}
	}
	return nil
}

// find is the leftmost match starting at pos or after.
func (m *matcher) find(pos int) []int {
	if m.prefix != "" { // every match starts with prefix: none starts before its next occurrence
		i := strings.Index(m.text[pos:], m.prefix)
		if i < 0 {
			return nil
		}
		pos += i
	}
	if pos == 0 {
		return m.re.FindStringSubmatchIndex(m.text)
	}
	_, w := utf8.DecodeLastRuneInString(m.text[:pos])
	q := pos - w
	a := m.from.FindStringSubmatchIndex(m.text[q:])
	if a == nil {
		return nil
	}
	a = a[2:] // group 1 is P's match, then P's groups
	for i := range a {
		if a[i] >= 0 {
			a[i] += q
		}
	}
	return a
}
