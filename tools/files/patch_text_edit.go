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
}

// eolOf is the line ending a file uses: "\r\n" when every line break in b is CRLF, else "\n".
// Why: a CRLF file must stay CRLF when a model (which writes "\n") patches it.
func eolOf(b []byte) string {
	if n := bytes.Count(b, []byte("\r\n")); n > 0 && n == bytes.Count(b, []byte("\n")) {
		return "\r\n"
	}
	return "\n"
}

// withEOL rewrites the line breaks of s to eol.
func withEOL(s, eol string) string {
	if eol == "\n" || !strings.Contains(s, "\n") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", eol)
}

// splitLines splits text after each "\n", keeping the terminators ("a\r\nb" → "a\r\n", "b").
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// trimEOL drops a line's terminator, so that patterns see the line as the model does
// ("foo$" matches "foo\r\n").
func trimEOL(l string) string {
	return strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
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

// apply performs e on text with content (already in the file's line endings eol) and
// returns the new text, the lines affected and the pattern matches.
func (e textEdit) apply(text, content, eol string) (string, int, int, error) {
	if e.position == "replace" && e.line == 0 {
		return e.replacePattern(text, content)
	}
	lines := splitLines(text)
	n := len(lines)
	// Line-based edits insert whole lines: a final terminator is added to the content.
	block := content
	if block != "" && !strings.HasSuffix(block, "\n") {
		block += eol
	}
	var at []int // insertion indexes, ascending
	affected, matches := 0, 0
	if e.line > 0 {
		limit := n
		if e.position == "before" {
			limit = n + 1
		}
		if e.line > limit {
			return "", 0, 0, core.Errf(core.InvalidParameter, "Line %d beyond file (%d lines)", e.line, n).
				With("line", e.line).With("lines", n).WithHint("Use a line between 1 and %d, or position='end' to append", max(limit, 1))
		}
		switch e.position {
		case "before":
			at = []int{e.line - 1}
		case "after":
			at = []int{e.line}
		case "replace":
			end := e.line
			if e.endLine > 0 {
				end = min(e.endLine, n)
			}
			out := joinLines(lines[:e.line-1], block, lines[end:], eol, text, end == n)
			return out, end - e.line + 1, 0, nil
		}
		affected = 1
	} else {
		for i, l := range lines {
			if !e.re.MatchString(trimEOL(l)) {
				continue
			}
			matches++
			if e.position == "before" {
				at = append(at, i)
			} else {
				at = append(at, i+1)
			}
			if !e.matchAll {
				break
			}
		}
		if matches == 0 {
			return "", 0, 0, patternNotFound(e.pattern)
		}
		affected = matches
	}
	var b strings.Builder
	prev := 0
	for _, i := range at {
		for _, l := range lines[prev:i] {
			b.WriteString(l)
		}
		if i > 0 && !strings.HasSuffix(lines[i-1], "\n") {
			b.WriteString(eol) // inserting after an unterminated last line
		}
		b.WriteString(block)
		prev = i
	}
	for _, l := range lines[prev:] {
		b.WriteString(l)
	}
	out := b.String()
	if at[len(at)-1] == n && n > 0 && !strings.HasSuffix(text, "\n") {
		out = strings.TrimSuffix(out, eol) // keep "no final newline"
	}
	return out, affected, matches, nil
}

// joinLines is head + block + tail; atEnd says the block replaced the last line, in which
// case a text without a final newline keeps none.
func joinLines(head []string, block string, tail []string, eol, text string, atEnd bool) string {
	var b strings.Builder
	for _, l := range head {
		b.WriteString(l)
	}
	b.WriteString(block)
	for _, l := range tail {
		b.WriteString(l)
	}
	out := b.String()
	if atEnd && !strings.HasSuffix(text, "\n") {
		out = strings.TrimSuffix(out, eol)
	}
	return out
}

// replacePattern substitutes the first (or every) match of the pattern in the whole text.
// content is literal except group references (see parseTemplate).
func (e textEdit) replacePattern(text, content string) (string, int, int, error) {
	limit := 1
	if e.matchAll {
		limit = -1
	}
	found := e.re.FindAllStringSubmatchIndex(text, limit)
	if len(found) == 0 {
		return "", 0, 0, patternNotFound(e.pattern)
	}
	tmpl := parseTemplate(content, e.re)
	var b strings.Builder
	prev := 0
	for _, m := range found {
		b.WriteString(text[prev:m[0]])
		for _, p := range tmpl {
			if p.group < 0 {
				b.WriteString(p.text)
			} else if s, t := m[2*p.group], m[2*p.group+1]; s >= 0 {
				b.WriteString(text[s:t])
			}
		}
		prev = m[1]
	}
	b.WriteString(text[prev:])
	return b.String(), len(found), len(found), nil
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
	if err != nil {
		return nil, core.Errf(core.InvalidParameter, "Invalid regex pattern: %v", err).With("pattern", core.Shorten(pattern)).Because(err).
			WithHint("Patterns use RE2 syntax (no lookaround, no backreferences); escape special characters with \\")
	}
	return re, nil
}
