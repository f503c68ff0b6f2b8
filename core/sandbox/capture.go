package sandbox

import (
	"bytes"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core/textcap"
)

// capture keeps the head and tail of a command's output stream (textcap.HeadTail: bounded
// memory, cuts on line or character boundaries) and remembers whether a NUL byte went by, so
// a command printing gigabytes uses constant memory and binary output is recognised even
// when the NUL was in the dropped middle.
type capture struct {
	mu  sync.Mutex
	ht  *textcap.HeadTail
	nul bool
}

func newCapture(limit int) *capture { return &capture{ht: textcap.NewHeadTail(limit)} }

// Write implements io.Writer; it never fails (the child must not get EPIPE).
func (c *capture) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.nul && bytes.IndexByte(b, 0) >= 0 {
		c.nul = true
	}
	return c.ht.Write(b)
}

// result renders the capture: the text, whether it was binary, whether truncated.
// Binary output (a NUL byte anywhere, or invalid UTF-8 in what was kept) is replaced by a
// marker with its size instead of being dumped; a cut is marked with what it dropped.
func (c *capture) result() (text string, binary, truncated bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	head, tail, cut := c.ht.Parts()
	truncated = c.ht.Truncated()
	if c.nul || !utf8.Valid(head) || !utf8.Valid(tail) {
		return fmt.Sprintf("[binary output: %d bytes]", c.ht.Total()), true, truncated
	}
	if !truncated {
		return string(head), false, false
	}
	return string(head) + textcap.Marker(cut, "") + string(tail), false, true
}
