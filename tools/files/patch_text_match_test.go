package files

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core"
)

// matchAll drains a matcher.
func matchAll(re *regexp.Regexp, text string, all bool) [][]int {
	var out [][]int
	m := newMatcher(re, text, all)
	for a := m.next(); a != nil; a = m.next() {
		out = append(out, a)
	}
	return out
}

// sameMatches compares the matcher with FindAllStringSubmatchIndex.
func sameMatches(t *testing.T, expr, text string) {
	t.Helper()
	re, err := regexp.Compile(expr)
	if err != nil {
		return
	}
	for _, all := range []bool{true, false} {
		n := -1
		if !all {
			n = 1
		}
		want := re.FindAllStringSubmatchIndex(text, n)
		got := matchAll(re, text, all)
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("pattern %q in %q (all=%v): got %v, FindAll %v", expr, text, all, got, want)
		}
	}
}

// TestMatcherMatchesFindAll: the one-at-a-time matcher finds exactly FindAll's matches,
// whatever the pattern looks at around a match (anchors, word boundaries, empty matches,
// case folding, multi-byte runes).
func TestMatcherMatchesFindAll(t *testing.T) {
	t.Parallel()
	patterns := []string{`a`, `a*`, `x*`, `b*`, ``, `^`, `$`, `(?m)^`, `(?m)$`, `\b`, `\B`, `\bfoo\b`, `^foo`, `(?m)^foo`,
		`\Afoo`, `foo\z`, `(a)|(b)`, `(?i)é`, `(?s).`, `.`, `a|ab`, `(?P<n>o)o?`, `\s+`, `[^a]`, `\d*`, `日本`, `$^`,
		`(?m)$^`, `x*$`, `(?i)FOO`, `o*\b`, `\B.`, `(?m)^$`, `(?s)o.*?o`, `(?m)foo$`, `(f)(o)?(x)?`, `\bé`, `(?i)\bbar`,
		`\Q`, `\Qo)|(f`, `\Qfoo\E|b`, `(?U)o+`, `abc|abd|a`, `(?P<w>\w)+`}
	texts := []string{``, `a`, `foo`, `foo foo`, "foo\nfoo\n", "\nfoo\r\nbar foo\n\n", `aaa bab`, `ébé é`, "日本語 日本",
		`foofoo barfoo fo_o foo.`, "x\n\nx", `123 45a6`, `FOO Foo fOo`, "a\u0301b", `bar BAR bAr`, `  `}
	for _, p := range patterns {
		for _, s := range texts {
			sameMatches(t, p, s)
		}
	}
}

// TestPatternNestedToTheLimit: a pattern that compiles alone but not one level deeper
// (998 nested groups) is INVALID_PARAMETER, never a panic of the matcher.
func TestPatternNestedToTheLimit(t *testing.T) {
	t.Parallel()
	p := strings.Repeat("(", 998) + "a" + strings.Repeat(")", 998)
	if _, err := regexp.Compile(p); err != nil {
		t.Fatalf("the pattern should compile alone: %v", err)
	}
	if _, err := compilePattern(p, ""); err == nil {
		t.Fatal("accepted")
	} else if e, _ := core.AsError(err); e.Code != core.InvalidParameter {
		t.Fatalf("%v", err)
	}
}

// FuzzMatcher compares the matcher with FindAllStringSubmatchIndex on any pattern and text.
func FuzzMatcher(f *testing.F) {
	f.Add(`\bfo*`, "foo ofoo\nfo")
	f.Add(`(?m)^$|x*`, "a\n\nxx\n")
	f.Fuzz(func(t *testing.T, expr, text string) {
		if len(text) > 1<<12 || !utf8.ValidString(text) {
			return // texts are checked UTF-8 before any edit
		}
		sameMatches(t, expr, text)
	})
}
