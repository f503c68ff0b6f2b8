package sandbox

import (
	"bytes"
	"fmt"
	"sync"
	"unicode/utf8"
)

// capture keeps the first and last half of max bytes of a stream and counts the
// rest, so a command printing gigabytes uses constant memory.
type capture struct {
	mu    sync.Mutex
	max   int
	head  []byte
	tail  []byte // ring buffer of the last max-len(head) bytes
	pos   int    // next write position in tail once it is full
	total int64
	nul   bool
}

func newCapture(limit int) *capture { return &capture{max: limit} }

// Write implements io.Writer; it never fails (the child must not get EPIPE).
func (c *capture) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(b)
	c.total += int64(n)
	if !c.nul && bytes.IndexByte(b, 0) >= 0 {
		c.nul = true
	}
	headCap := c.max / 2
	if room := headCap - len(c.head); room > 0 {
		k := min(room, len(b))
		c.head = append(c.head, b[:k]...)
		b = b[k:]
	}
	tailCap := c.max - headCap
	if tailCap == 0 {
		return n, nil
	}
	if len(b) >= tailCap {
		c.tail = append(c.tail[:0], b[len(b)-tailCap:]...)
		c.pos = 0
		return n, nil
	}
	for len(b) > 0 {
		if len(c.tail) < tailCap {
			k := min(tailCap-len(c.tail), len(b))
			c.tail = append(c.tail, b[:k]...)
			b = b[k:]
			continue
		}
		k := copy(c.tail[c.pos:], b)
		c.pos = (c.pos + k) % tailCap
		b = b[k:]
	}
	return n, nil
}

// result renders the capture: the text, whether it was binary, whether truncated.
// Binary output (a NUL byte anywhere, or invalid UTF-8 in what was kept) is
// replaced by a marker with its size instead of being dumped.
func (c *capture) result() (text string, binary, truncated bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := append(append([]byte{}, c.tail[c.pos:]...), c.tail[:c.pos]...)
	omitted := c.total - int64(len(c.head)) - int64(len(tail))
	truncated = omitted > 0
	if c.nul || !utf8.Valid(trimRunes(c.head, false)) || !utf8.Valid(trimRunes(tail, true)) {
		return fmt.Sprintf("[binary output: %d bytes]", c.total), true, truncated
	}
	if !truncated {
		return string(c.head) + string(tail), false, false
	}
	// Drop the halves of runes cut at the edges so the text stays valid UTF-8.
	return fmt.Sprintf("%s\n[... %d bytes omitted ...]\n%s", trimRunes(c.head, false), omitted, trimRunes(tail, true)), false, true
}

// trimRunes drops a rune cut in half at the edge where the capture split the
// stream (the end of head, the start of tail), so a clean UTF-8 text is not taken
// for binary.
func trimRunes(b []byte, atStart bool) []byte {
	if atStart {
		for i := 0; i < utf8.UTFMax && i < len(b); i++ {
			if utf8.RuneStart(b[i]) {
				return b[i:]
			}
		}
		return b
	}
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if utf8.FullRune(b[len(b)-i:]) {
				return b
			}
			return b[:len(b)-i]
		}
	}
	return b
}
