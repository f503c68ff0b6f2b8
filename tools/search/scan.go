package search

import (
	"bytes"
	"context"
	"io"
)

// The scan of one text stream: read once, in large chunks, matched on whole lines (a chunk
// is cut after its last newline, the rest carried to the next); a line longer than maxLine is
// searched in windows of maxLine bytes overlapping by overlap bytes, and once it matched,
// the rest of it is only read through to its end. Memory per worker: one buffer of maxLine
// plus readChunk bytes, whatever the file's size.

const (
	readChunk = 256 << 10
	// maxLine is the longest line held whole.
	maxLine = 1 << 20
	// overlap is what a window of a long line keeps of the previous one: a literal up to
	// maxQuery bytes, or a regex match up to this long, is found across the seam.
	overlap = 4 << 10
)

// hit is one matching line.
type hit struct {
	line int64
	page int // PDFs: the page, line counting from its first line
	text string
}

// fileScan is what the scan of one file found: count matching lines; hits holds the
// matches numbered from, from+1, ... (at most keep of them).
type fileScan struct {
	count int
	from  int
	hits  []hit
}

// scanner is one worker's matcher and buffer.
type scanner struct {
	m   matcher
	buf []byte
}

// head reads the first bytes of r (up to readChunk) into the buffer, for scan to go on from.
func (sc *scanner) head(r io.Reader) ([]byte, error) {
	n, err := io.ReadFull(r, sc.buf[:readChunk])
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return sc.buf[:n], err
}

func newScanner(m matcher) *scanner {
	return &scanner{m: m, buf: make([]byte, maxLine+readChunk)}
}

// tally records one match of a file into out: its details are kept from the match
// numbered from, keep of them.
func (out *fileScan) tally(keep int, h func() hit) {
	if out.count >= out.from && len(out.hits) < keep {
		out.hits = append(out.hits, h())
	}
	out.count++
}

// scan reads r to its end (or until ctx ends: its error) and tallies its matching lines
// into out; the first held bytes of the stream are in the buffer already (head).
func (sc *scanner) scan(ctx context.Context, r io.Reader, held, keep, page int, out *fileScan) error {
	buf := sc.buf
	n := held        // bytes held in buf, from the start of a line (or inside a long one)
	line := int64(1) // the line of buf[0]
	midLine := false // buf[0] is inside a line (a long line's next window)
	through := false // a long line matched: read through to its end
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, rerr := io.ReadAtLeast(r, buf[n:], min(readChunk, len(buf)-n))
		n += m
		eof := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		if rerr != nil && !eof {
			return rerr
		}
		data := buf[:n]
		if through {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				n = 0
				if eof {
					return nil
				}
				continue
			}
			through, midLine = false, false
			line++
			data = data[i+1:]
		}
		end := len(data) // what is matched now: whole lines, or everything at the end
		if !eof {
			end = bytes.LastIndexByte(data, '\n') + 1
		}
		if end > 0 {
			line = sc.lines(data[:end], line, midLine, keep, page, out)
			midLine = false
		}
		rest := data[end:]
		if eof {
			return nil
		}
		if end == 0 && len(rest) >= maxLine { // one line fills the buffer: match this window
			if s, e := sc.m.find(rest); s >= 0 {
				out.tally(keep, func() hit { return hit{line: line, page: page, text: cut(rest, s, e, true, midLine)} })
				through, n = true, 0
				continue
			}
			rest, midLine = rest[len(rest)-overlap:], true
		}
		n = copy(buf, rest)
	}
}

// lines tallies the matching lines of block (whole lines, the first one numbered line) and
// returns the number of the line after it.
func (sc *scanner) lines(block []byte, line int64, midLine bool, keep, page int, out *fileScan) int64 {
	p := 0
	for p < len(block) {
		s, e := sc.m.find(block[p:])
		if s < 0 {
			break
		}
		s, e = s+p, e+p
		ls, le := lineBounds(block, s)
		line += int64(bytes.Count(block[p:ls], []byte{'\n'}))
		text := block[ls:le]
		mid := midLine && ls == 0
		out.tally(keep, func() hit { return hit{line: line, page: page, text: cut(text, s-ls, e-ls, false, mid)} })
		if le == len(block) {
			return line + 1
		}
		p = le + 1
		line++
	}
	return line + int64(bytes.Count(block[p:], []byte{'\n'}))
}
