package files

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/fileshed/fileshed/core"
)

// textEdit is a line- or pattern-based edit of a whole text (shed_patch_text positions
// before, after and replace).
type textEdit struct {
	position string
	line     int // 1-based; 0 = absent
	endLine  int // 0 = absent
	re       *regexp.Regexp
	matchAll bool
	pattern  string // as given, for messages
	anchor   string // the hash line must still have (anchor "N:hh"); "" = none
	flags    string // regex_flags, for the loose match of a miss
}

// eolOf is the line ending a text uses: "\r\n" when every line break in s is CRLF, else "\n".
// Why: a CRLF file must stay CRLF when a model (which writes "\n") patches it.
func eolOf(s string) string {
	return eolOfCounts(strings.Count(s, "\r\n"), strings.Count(s, "\n"))
}

// eolOfCounts is eolOf from the counts of "\r\n" and of "\n".
func eolOfCounts(crlf, lf int) string {
	if crlf > 0 && crlf == lf {
		return "\r\n"
	}
	return "\n"
}

// withEOL rewrites the line breaks of s to eol ("\n" or "\r\n"): with "\r\n", every "\n"
// not already after a "\r" gains one, in one pass and one allocation (the content may be
// most of a large body).
func withEOL(s, eol string) string {
	if eol == "\n" {
		return s
	}
	n := strings.Count(s, "\n") - strings.Count(s, "\r\n")
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + n)
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		b.WriteString(s[:i])
		if i == 0 || s[i-1] != '\r' {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
		s = s[i+1:]
	}
	b.WriteString(s)
	return b.String()
}

// trimEOL drops a line's terminator, so that patterns see the line as the model does
// ("foo$" matches "foo\r\n").
func trimEOL(l []byte) []byte {
	return bytes.TrimSuffix(bytes.TrimSuffix(l, []byte("\n")), []byte("\r"))
}

// countLines is the number of lines a text spans ("a\nb" and "a\nb\n" are 2).
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// piece is one part of a replacement template: literal text, or a group number.
type piece struct {
	text  string
	group int // -1 for literal text
}

// parseTemplate reads a replacement: every byte is literal except \N (N = 1..99, the
// longest number naming a group of re), \g<N> (0 = the whole match) and \g<name> that name
// a group re defines. "\\" stays two backslashes, and "C:\new\dir", "\n", "$1", "\0" or a
// reference to a group the pattern lacks are written as sent: a model replacing C, LaTeX or
// a Windows path gets the bytes it sent (the original expanded Python escapes).
func parseTemplate(t string, re *regexp.Regexp) []piece {
	var out []piece
	var lit strings.Builder
	ref := func(g int) {
		if lit.Len() > 0 {
			out = append(out, piece{text: lit.String(), group: -1})
			lit.Reset()
		}
		out = append(out, piece{group: g})
	}
	n := re.NumSubexp()
	for i := 0; i < len(t); i++ {
		if t[i] != '\\' || i+1 == len(t) {
			lit.WriteByte(t[i])
			continue
		}
		next := t[i+1]
		switch {
		case next == '\\':
			lit.WriteString(`\\`)
			i++
			continue
		case next >= '1' && next <= '9':
			if i+2 < len(t) && t[i+2] >= '0' && t[i+2] <= '9' {
				if g, _ := strconv.Atoi(t[i+1 : i+3]); g <= n {
					ref(g)
					i += 2
					continue
				}
			}
			if g := int(next - '0'); g <= n {
				ref(g)
				i++
				continue
			}
		case next == 'g' && i+2 < len(t) && t[i+2] == '<':
			if end := strings.IndexByte(t[i+3:], '>'); end >= 0 {
				name := t[i+3 : i+3+end]
				g, err := strconv.Atoi(name)
				if err != nil {
					g = re.SubexpIndex(name)
				}
				if g >= 0 && g <= n && name != "" {
					ref(g)
					i += 3 + end
					continue
				}
			}
		}
		lit.WriteByte('\\')
	}
	if lit.Len() > 0 {
		out = append(out, piece{text: lit.String(), group: -1})
	}
	return out
}

// patternNotFound is PATTERN_NOT_FOUND for pattern.
func patternNotFound(pattern string) *core.Error {
	return core.Errf(core.PatternNotFound, "Pattern not found: %s", core.Shorten(pattern)).With("pattern", core.Shorten(pattern))
}

// compilePattern compiles a pattern with the original's flags (i, m, s; others ignored).
// Go's RE2 engine runs in linear time, so no pattern can backtrack catastrophically.
func compilePattern(pattern, flags string) (*regexp.Regexp, error) {
	var f strings.Builder
	for _, c := range strings.ToLower(flags) {
		if strings.ContainsRune("ims", c) && !strings.ContainsRune(f.String(), c) {
			f.WriteRune(c)
		}
	}
	expr := pattern
	if f.Len() > 0 {
		expr = "(?" + f.String() + ")" + pattern
	}
	re, err := regexp.Compile(expr)
	if err == nil {
		_, err = searchFrom(re) // what a pattern replace runs: it nests the pattern one level deeper
	}
	if err != nil {
		return nil, core.Errf(core.InvalidParameter, "Invalid regex pattern: %v", err).With("pattern", core.Shorten(pattern)).Because(err).
			WithHint("Patterns use RE2 syntax (no lookaround, no backreferences); escape special characters with \\")
	}
	return re, nil
}
