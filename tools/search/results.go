package search

import (
	"strings"
	"unicode/utf8"
)

// lineWidth is the most bytes of a line an answer shows: longer lines are cut around their
// match (a third of the width before it), with "…" where text was cut.
const lineWidth = 200

// ellipsis marks text cut from a line.
const ellipsis = "…"

// cut renders the matching line l (without its newline), its match at [ms, me), within
// lineWidth bytes around the match; cutAfter/cutBefore say that l is a window of a longer
// line, which continues after/before it.
func cut(l []byte, ms, me int, cutAfter, cutBefore bool) string {
	if n := len(l); n > 0 && l[n-1] == '\r' && !cutAfter {
		l = l[:n-1]
		me = min(me, n-1)
		ms = min(ms, me)
	}
	start, end := 0, len(l)
	if len(l) > lineWidth {
		start = max(0, ms-lineWidth/3)
		if me-ms > lineWidth-lineWidth/3 { // a long match: show its start
			start = ms
		}
		end = min(len(l), start+lineWidth)
		for start > 0 && start < len(l) && !utf8.RuneStart(l[start]) {
			start++
		}
		for end < len(l) && end > start && !utf8.RuneStart(l[end]) {
			end--
		}
	}
	var b strings.Builder
	if start > 0 || cutBefore {
		b.WriteString(ellipsis)
	}
	b.WriteString(strings.ToValidUTF8(string(l[start:end]), "\uFFFD"))
	if end < len(l) || cutAfter {
		b.WriteString(ellipsis)
	}
	return b.String()
}

// answer is shed_search's data (fields in the order of the JSON keys, alphabetical):
// files in search order with their matches; next_offset when matches follow (offset to
// call again with); skipped counts what was not searched, by reason.
type answer struct {
	Files         []fileAnswer   `json:"files"`
	FilesMatched  int            `json:"files_matched"`
	FilesSearched int            `json:"files_searched"`
	Matches       int            `json:"matches"`
	NextOffset    *int           `json:"next_offset,omitempty"`
	Offset        int            `json:"offset"`
	Skipped       map[string]int `json:"skipped,omitempty"`
	TimedOut      bool           `json:"timed_out,omitempty"`
	Truncated     bool           `json:"truncated"`
	Zones         []string       `json:"zones"`
}

// fileAnswer is one file's matches: name (true) when its name matched, the matching lines
// (with the page of a PDF), and kind for the text of a PDF or an office file.
type fileAnswer struct {
	Group string       `json:"group,omitempty"`
	Kind  string       `json:"kind,omitempty"`
	Lines []lineAnswer `json:"lines,omitempty"`
	Name  bool         `json:"name,omitempty"`
	Path  string       `json:"path"`
	Zone  string       `json:"zone"`
}

// lineAnswer is one matching line.
type lineAnswer struct {
	Line int64  `json:"line"`
	Page int    `json:"page,omitempty"`
	Text string `json:"text"`
}

// Sizes of the JSON around a line and a file, for the answer's byte budget.
const (
	lineOverhead = len(`{"line":1234567,"page":1234,"text":""},`)
	fileOverhead = len(`{"group":"","kind":"docx","lines":[],"name":true,"path":"","zone":"documents"},`)
)

// size is what l adds to the answer, JSON escapes included (a control character is \u00XX).
func (l lineAnswer) size() int {
	n := lineOverhead + len(l.Text)
	for i := 0; i < len(l.Text); i++ {
		switch c := l.Text[i]; {
		case c < 0x20:
			n += 5
		case c == '"' || c == '\\':
			n++
		}
	}
	return n
}
