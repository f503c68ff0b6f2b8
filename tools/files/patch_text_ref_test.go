package files

import (
	"strings"

	"github.com/fileshed/fileshed/core"
)

// The in-memory text edit as it was before edits streamed (issue 24): the reference the
// streaming edit is compared with (TestTextEditMatchesReference).

// refSplitLines splits text after each "\n", keeping the terminators ("a\r\nb" → "a\r\n", "b").
func refSplitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// refApply performs e on text with content (already in the file's line endings eol) and
// returns the new text, the lines affected and the pattern matches.
func (e textEdit) refApply(text, content, eol string) (string, int, int, error) {
	if e.position == "replace" && e.line == 0 {
		return e.refReplacePattern(text, content)
	}
	lines := refSplitLines(text)
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
			out := refJoinLines(lines[:e.line-1], block, lines[end:], eol, text, end == n)
			return out, end - e.line + 1, 0, nil
		}
		affected = 1
	} else {
		for i, l := range lines {
			if !e.re.Match(trimEOL([]byte(l))) {
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

// refJoinLines is head + block + tail; atEnd says the block replaced the last line, in which
// case a text without a final newline keeps none.
func refJoinLines(head []string, block string, tail []string, eol, text string, atEnd bool) string {
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

// refReplacePattern substitutes the first (or every) match of the pattern in the whole text.
// content is literal except group references (see parseTemplate).
func (e textEdit) refReplacePattern(text, content string) (string, int, int, error) {
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
