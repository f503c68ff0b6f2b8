package textcap

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// SniffLen is how much of a file or stream LooksBinary inspects.
const SniffLen = 8 << 10

// LooksBinary reports whether sample (the first SniffLen bytes) is binary: a NUL byte, or
// more than 5% control characters. Tab, newline, vertical tab, form feed, carriage return and
// escape (ANSI-coloured logs) are text. Bytes >= 0x80 are not counted: they are UTF-8 or
// another 8-bit encoding, which the text path reports instead of calling it binary.
func LooksBinary(sample []byte) bool {
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	ctl := 0
	for _, b := range sample {
		ctl += int(controlByte[b]) // a table: shed_search judges every file it reads (issue 38)
	}
	return ctl*20 > len(sample)
}

// controlByte is 1 for the bytes LooksBinary counts: the C0 controls but tab, newline,
// vertical tab, form feed, carriage return and escape, and DEL.
var controlByte = func() (t [256]uint8) {
	for b := range 0x20 {
		t[b] = 1
	}
	for _, b := range []byte{'\t', '\n', '\v', '\f', '\r', 0x1b} {
		t[b] = 0
	}
	t[0x7f] = 1
	return t
}()

// LineEndings summarises the line breaks of a text sample: "lf", "crlf", "cr" (old Mac),
// "mixed", or "none".
func LineEndings(sample []byte) string {
	crlf := bytes.Count(sample, []byte("\r\n"))
	lf := bytes.Count(sample, []byte("\n")) - crlf
	cr := bytes.Count(sample, []byte("\r")) - crlf
	switch {
	case crlf == 0 && lf == 0 && cr == 0:
		return "none"
	case lf == 0 && cr == 0:
		return "crlf"
	case crlf == 0 && cr == 0:
		return "lf"
	case crlf == 0 && lf == 0:
		return "cr"
	}
	return "mixed"
}

// ValidText returns b as a string in which every byte that is not part of a valid UTF-8
// sequence is replaced by U+FFFD, and how many bytes were replaced. Why replace and count
// rather than refuse: a Latin-1 file with a few accents stays readable, and the caller tells
// the model exactly how many bytes were not UTF-8 (shed_read_bytes shows them exactly).
func ValidText(b []byte) (string, int) {
	if utf8.Valid(b) {
		return string(b), 0
	}
	var sb strings.Builder
	sb.Grow(len(b) + 16)
	bad := 0
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
			bad++
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String(), bad
}

// HeadTail is an io.Writer that keeps the first and the last bytes of what is written to it,
// within limit bytes in total, and counts what it drops. Memory stays O(limit) whatever the
// stream's size: a 300 MB file or a chatty command costs the same.
type HeadTail struct {
	headCap, tailCap int
	head             []byte
	// tail is a sliding window: up to 2*(tailCap+1) bytes, of which the last tailCap count.
	tail     []byte
	total    int64
	newlines int64
}

// NewHeadTail keeps at most limit bytes (at least 2): 60% head, 40% tail.
func NewHeadTail(limit int) *HeadTail {
	limit = max(limit, 2)
	h := limit * 3 / 5
	return &HeadTail{headCap: h, tailCap: limit - h}
}

// Write keeps what fits in the head, slides the rest through the tail window. It never fails.
func (h *HeadTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += int64(n)
	h.newlines += int64(bytes.Count(p, []byte{'\n'}))
	if room := h.headCap - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	// The window keeps one byte more than the tail: Parts needs to know whether the tail
	// starts right after a newline.
	w := h.tailCap + 1
	switch {
	case len(p) == 0:
	case len(p) >= w:
		h.tail = append(h.tail[:0], p[len(p)-w:]...)
	default:
		if h.tail == nil {
			h.tail = make([]byte, 0, 2*w)
		}
		if len(h.tail)+len(p) > cap(h.tail) {
			// Keep the last w-len(p) bytes, then append: the window never grows.
			keep := h.tail[len(h.tail)-min(len(h.tail), w-len(p)):]
			h.tail = append(h.tail[:0], keep...)
		}
		h.tail = append(h.tail, p...)
	}
	return n, nil
}

// Total is the number of bytes written.
func (h *HeadTail) Total() int64 { return h.total }

// Newlines is the number of '\n' written.
func (h *HeadTail) Newlines() int64 { return h.newlines }

// Truncated reports whether anything was dropped.
func (h *HeadTail) Truncated() bool { return h.total > int64(h.headCap+h.tailCap) }

// Cut describes what a truncated HeadTail dropped.
type Cut struct {
	Bytes int64 // bytes between head and tail
	// HeadNewlines and CutNewlines count '\n' in the head and in the dropped middle: a line
	// oriented caller turns them into line numbers.
	HeadNewlines, CutNewlines int64
	// Lines is how many lines the cut touches, wholly or partly: the first one is line
	// HeadNewlines+1 of what was written.
	Lines int64
}

// Parts returns the head, the tail and what lies between them. When truncated, the head ends
// and the tail starts on a line boundary if one is near (within a quarter of each part),
// otherwise on a UTF-8 character boundary, so neither part ends in half a character.
func (h *HeadTail) Parts() (head, tail []byte, cut Cut) {
	head = h.head
	tail = h.tail[len(h.tail)-min(len(h.tail), h.tailCap):]
	if !h.Truncated() {
		return slices.Concat(head, tail), nil, Cut{}
	}
	// Truncated: more than tailCap bytes went through the window, so it holds the byte
	// before the tail.
	afterNewline := h.tail[len(h.tail)-h.tailCap-1] == '\n'
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 && i >= len(head)-len(head)/4 {
		head = head[:i+1]
	} else {
		// Find where the last character starts; drop it if the cap cut it short.
		i := len(head) - 1
		for i > 0 && i > len(head)-utf8.UTFMax && !utf8.RuneStart(head[i]) {
			i--
		}
		if i >= 0 && !utf8.FullRune(head[i:]) {
			head = head[:i]
		}
	}
	lineStart := afterNewline
	if i := bytes.IndexByte(tail, '\n'); !lineStart && i >= 0 && i < len(tail)/4 {
		tail, lineStart = tail[i+1:], true
	} else if !lineStart {
		for k := 0; k < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); k++ {
			tail = tail[1:]
		}
	}
	cut.Bytes = h.total - int64(len(head)+len(tail))
	cut.HeadNewlines = int64(bytes.Count(head, []byte{'\n'}))
	cut.CutNewlines = h.newlines - cut.HeadNewlines - int64(bytes.Count(tail, []byte{'\n'}))
	cut.Lines = cut.CutNewlines
	if !lineStart {
		cut.Lines++ // the tail's first line began in the cut
	}
	return head, tail, cut
}

// String returns the kept text with a marker naming what was cut, e.g.
// "[... 1200345 bytes (20150 lines) cut ...]"; advice, when not empty, is appended inside
// the marker ("use start_line/end_line to read them"). Invalid UTF-8 becomes U+FFFD.
func (h *HeadTail) String(advice string) string {
	head, tail, cut := h.Parts()
	hs, _ := ValidText(head)
	if tail == nil {
		return hs
	}
	ts, _ := ValidText(tail)
	return hs + Marker(cut, advice) + ts
}

// Marker is the line inserted where a cap dropped output.
func Marker(cut Cut, advice string) string {
	unit := "lines"
	if cut.Lines == 1 {
		unit = "line"
	}
	m := fmt.Sprintf("[... %d bytes (%d %s) cut", cut.Bytes, cut.Lines, unit)
	if advice != "" {
		m += ": " + advice
	}
	return "\n" + m + " ...]\n"
}
