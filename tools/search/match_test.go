package search

import (
	"bytes"
	"context"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// reference is what grep would say of each line: whether it matches query (literal or
// RE2, case-insensitive unless cs), line by line with the standard library.
func reference(t *testing.T, query string, regex, cs bool) func(line string) bool {
	t.Helper()
	if !regex {
		if cs {
			return func(l string) bool { return strings.Contains(l, query) }
		}
		q := strings.ToLower(query)
		return func(l string) bool { return strings.Contains(asciiLower(l), q) }
	}
	flags := "(?i)"
	if cs {
		flags = ""
	}
	re := regexp.MustCompile(flags + query)
	return re.MatchString
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// scanLines runs the scanner over text and answers the matching lines' numbers.
func scanLines(t *testing.T, m matcher, text string) []int64 {
	t.Helper()
	var out fileScan
	if err := newScanner(m).scan(context.Background(), strings.NewReader(text), 0, 1<<30, 0, &out); err != nil {
		t.Fatal(err)
	}
	lines := make([]int64, 0, len(out.hits))
	for _, h := range out.hits {
		lines = append(lines, h.line)
	}
	if out.count != len(out.hits) {
		t.Fatalf("count %d, %d hits", out.count, len(out.hits))
	}
	return lines
}

// TestMatcherAgreesWithLineByLine: on random texts (CRLF, empty lines, tabs, mixed case,
// a line without its newline at the end), every matcher finds exactly the lines a
// line-by-line match finds: literals either case, and regexes whose classes could match a
// newline ([^x], \s, (?s).), anchors, \A and \z, alternations and empty matches.
func TestMatcherAgreesWithLineByLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "A", "B", "ab", "Ab", "x", " ", "\t", "é", "K", "s", "\r"}
	queries := []struct {
		q         string
		regex, cs bool
	}{
		{"ab", false, false}, {"ab", false, true}, {"Ab a", false, false}, {"b\tx", false, false}, {"é", false, false},
		{"a[^x]b", true, false}, {`a\sb`, true, true}, {`(?s)a.b`, true, false}, {"^ab", true, false}, {"b$", true, true},
		{`\Aa`, true, false}, {`b\z`, true, false}, {"x*", true, false}, {"(ab|ba)+x", true, false}, {`\bab\b`, true, true},
		{"[[:upper:]]b", true, true}, {"ab?a", true, false}, {"[ab][^x][ab]", true, false}, {`\s[[:upper:]]`, true, true},
		{"(?s)[ab].[ab]", true, false}, {`[ab]\s*$`, true, false},
	}
	for i := range 300 {
		var b strings.Builder
		n := rng.IntN(40)
		for range n {
			for range rng.IntN(12) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			b.WriteByte('\n')
		}
		if rng.IntN(2) == 0 {
			b.WriteString("ab last")
		}
		text := b.String()
		for _, q := range queries {
			m, err := newMatcher(q.q, q.regex, q.cs)
			if err != nil {
				t.Fatal(err)
			}
			ref := reference(t, q.q, q.regex, q.cs)
			var want []int64
			for j, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
				if text != "" && ref(l) {
					want = append(want, int64(j+1))
				}
			}
			if got := scanLines(t, m, text); !equal(got, want) {
				t.Fatalf("text %d, query %+v: lines %v, want %v\n%q", i, q, got, want, text)
			}
		}
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestScanLongLines: lines longer than the buffer are searched in windows: a literal that
// straddles a window's seam is found, a line that matched is counted once however many
// windows match, and the numbers of the lines after it are right.
func TestScanLongLines(t *testing.T) {
	m, _ := newMatcher("needle", false, false)
	long := bytes.Repeat([]byte("x"), 3*maxLine)
	for _, at := range []int{0, maxLine - 3, maxLine + readChunk - 2, 2*maxLine - 1, len(long) - 6} {
		line := bytes.Clone(long)
		copy(line[at:], "needle")
		text := "first\n" + string(line) + "\n" + string(long) + "\nneedle last\n"
		if got := scanLines(t, m, text); !equal(got, []int64{2, 4}) {
			t.Fatalf("needle at %d: lines %v", at, got)
		}
	}
	many := strings.Repeat("needle ", 3*maxLine/7) + "\nneedle\n"
	if got := scanLines(t, m, many); !equal(got, []int64{1, 2}) {
		t.Fatalf("a long line of needles: lines %v", got)
	}
}

// TestCutKeepsTheMatchVisible: a long line is cut around its match, on character
// boundaries, with "…" on the cut sides; a short one is shown whole, without its CR.
func TestCutKeepsTheMatchVisible(t *testing.T) {
	long := strings.Repeat("é", 300) + "NEEDLE" + strings.Repeat("ü", 300)
	i := strings.Index(long, "NEEDLE")
	got := cut([]byte(long), i, i+6, false, false)
	if !strings.Contains(got, "NEEDLE") || !strings.HasPrefix(got, ellipsis) || !strings.HasSuffix(got, ellipsis) ||
		len(got) > lineWidth+2*len(ellipsis) || strings.ContainsRune(got, '\uFFFD') {
		t.Fatalf("cut: %q", got)
	}
	if got := cut([]byte("short line\r"), 0, 5, false, false); got != "short line" {
		t.Fatalf("short: %q", got)
	}
	huge := strings.Repeat("a", 500)
	if got := cut([]byte("x"+huge), 1, 501, false, false); !strings.HasPrefix(got, ellipsis+"aaa") || len(got) > lineWidth+2*len(ellipsis) {
		t.Fatalf("a match longer than the width: %q", got)
	}
}

// TestMemTextsBound: the texts kept in memory stay within memTextsMax, the least recently
// used dropped first.
func TestMemTextsBound(t *testing.T) {
	var m memTexts
	chunk := make([]byte, memTextsMax/8)
	for i := range 10 {
		m.remember(string(rune('a'+i)), chunk)
		if i == 2 {
			m.recall("a") // used again: kept over b
		}
	}
	if m.size > memTextsMax {
		t.Fatalf("%d bytes kept", m.size)
	}
	_, a := m.recall("a")
	_, b := m.recall("b")
	_, j := m.recall("j")
	if !a || b || !j {
		t.Fatalf("kept a=%v b=%v j=%v", a, b, j)
	}
	m.remember("huge", make([]byte, memTextsMax/2))
	if _, ok := m.recall("huge"); ok {
		t.Fatal("a text over a quarter of the bound was kept")
	}
}
