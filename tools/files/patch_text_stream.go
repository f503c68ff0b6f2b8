package files

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core"
)

// Line and pattern edits of shed_patch_text stream the file (issue 24): a first read
// checks that it is text and counts what the edit needs (lines, line endings, matching
// lines), a second writes the result into the atomic write, line by line. Memory is the
// longest line, not the file. A pattern replace (position=replace with a pattern) runs the
// regex over the whole text, which it must hold: the file (at most max_file_size_mb), and
// nothing more, since its matches are found one at a time (matcher) and the result is
// streamed.

// textScan is what the first read of a text file found.
type textScan struct {
	lines      int
	terminated bool   // the text ends with "\n" (or is empty)
	eol        string // see eolOf
	matches    int    // lines the pattern matches (the first only unless match_all)
	removed    int64  // bytes of the lines a replace by line number removes
	// all and where: every line the pattern matches, and the first few (a note when one
	// was edited of several).
	all   int
	where []int
}

// eachLine calls fn with each line of r, its terminator included, one at a time.
func eachLine(r io.Reader, fn func(line []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than the buffer
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			line = long
		}
		if len(line) > 0 {
			if ferr := fn(line); ferr != nil {
				return ferr
			}
		}
		long = long[:0]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// notText is the refusal of a file that is not UTF-8 text.
func notText(t core.Target) error {
	return core.Errf(core.InvalidFormat, "File is not UTF-8 text: %s", t.Shown).With("path", t.Shown).
		WithHint("Edit binary files with shed_patch_bytes (see shed_hexdump); text edits would corrupt them")
}

// matchLine reports whether the pattern matches a line (without its terminator).
func (e textEdit) matchLine(l []byte) bool { return e.re.Match(trimEOL(l)) }

// scan reads the text of t (in z) once for a line or pattern edit (not a pattern replace).
func (e textEdit) scan(r io.Reader, z *core.Zone, t core.Target) (textScan, error) {
	sc := textScan{terminated: true}
	crlf, lf := 0, 0
	err := eachLine(r, func(l []byte) error {
		// A line ends at "\n", never inside a UTF-8 sequence: checked line by line, the
		// text is checked whole.
		if !utf8.Valid(l) || bytes.IndexByte(l, 0) >= 0 {
			return notText(t)
		}
		sc.lines++
		sc.terminated = l[len(l)-1] == '\n'
		if sc.terminated {
			lf++
			if bytes.HasSuffix(l, []byte("\r\n")) {
				crlf++
			}
		}
		switch {
		case e.line == 0:
			if e.matchLine(l) {
				if e.matchAll || sc.matches == 0 {
					sc.matches++
				}
				if sc.all++; len(sc.where) < 5 {
					sc.where = append(sc.where, sc.lines)
				}
			}
		case e.position == "replace" && sc.lines >= e.line && sc.lines <= max(e.line, e.endLine):
			sc.removed += int64(len(l))
		}
		return nil
	})
	if err != nil {
		if _, ok := core.AsError(err); !ok {
			err = core.WriteError(err, z, t.Shown)
		}
		return sc, err
	}
	sc.eol = eolOfCounts(crlf, lf)
	return sc, nil
}

// lineEdit checks e against what scan found and returns the size of the result and the
// lines affected. block is the content in the file's line endings, ending with one.
func (e textEdit) lineEdit(sc textScan, size int64, block string) (int64, int, error) {
	n := sc.lines
	if e.line == 0 {
		if sc.matches == 0 {
			return 0, 0, patternNotFound(e.pattern)
		}
		return size + int64(sc.matches*len(block)), sc.matches, nil
	}
	limit := n
	if e.position == "before" {
		limit = n + 1
	}
	if e.line > limit {
		return 0, 0, core.Errf(core.InvalidParameter, "Line %d beyond file (%d lines)", e.line, n).
			With("line", e.line).With("lines", n).WithHint("Use a line between 1 and %d, or position='end' to append", max(limit, 1))
	}
	if e.position != "replace" {
		// A block inserted after an unterminated last line takes a line ending first and
		// drops its own: the size grows by the block.
		return size + int64(len(block)), 1, nil
	}
	end := e.line
	if e.endLine > 0 {
		end = min(e.endLine, n)
	}
	size += int64(len(block)) - sc.removed
	if end == n && !sc.terminated && (block != "" || e.line > 1) {
		size -= int64(len(sc.eol)) // a text without a final line ending keeps none
	}
	return size, end - e.line + 1, nil
}

// writeLines writes the edited text, reading the old one from r a line at a time: block
// inserted where e says, or in place of the lines e replaces. It fails with core.ErrChangedMeanwhile
// unless it writes exactly size bytes from the text scan read.
func (e textEdit) writeLines(w io.Writer, r io.Reader, sc textScan, block string, size int64) error {
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 64<<10)
	tw := &tailWriter{w: bw}
	n, last := sc.lines, -1 // last: the index of the last insertion
	eol, blk := []byte(sc.eol), []byte(block)
	insert := func(at int) {
		if at > 0 && at == n && !sc.terminated {
			tw.write(eol) // inserting after an unterminated last line
		}
		tw.write(blk)
		last = at
	}
	end := e.line
	if e.endLine > 0 {
		end = min(e.endLine, n)
	}
	at := e.line - 1 // the insertion index of a line-based edit
	if e.position == "after" {
		at = e.line
	}
	i, found, pending := 0, 0, false
	err := eachLine(r, func(l []byte) error {
		switch {
		case e.line == 0:
			if pending {
				insert(i)
				pending = false
			}
			if (e.matchAll || found == 0) && e.matchLine(l) {
				found++
				if e.position == "before" {
					insert(i)
				} else {
					pending = true
				}
			}
		case e.position == "replace":
			if i == e.line-1 {
				tw.write(blk)
			}
			if i >= e.line-1 && i < end {
				i++
				return tw.err
			}
		case i == at:
			insert(i)
		}
		tw.write(l)
		i++
		return tw.err
	})
	if err != nil {
		return err
	}
	if i != n {
		return core.ErrChangedMeanwhile
	}
	trim := false
	switch {
	case e.position == "replace" && e.line > 0:
		trim = end == n && !sc.terminated
	case pending || e.line > 0 && at == n:
		insert(n)
	}
	if last == n && n > 0 && !sc.terminated {
		trim = true // keep "no final newline"
	}
	tw.end(trim, sc.eol)
	if tw.err != nil {
		return tw.err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if cw.n != size {
		return core.ErrChangedMeanwhile
	}
	return nil
}

// tailWriter writes everything but its last two bytes, which end writes or drops: an edit
// may have to take back the final line ending it wrote. The first error sticks.
type tailWriter struct {
	w    io.Writer
	tail []byte
	err  error
}

func (t *tailWriter) write(p []byte) {
	switch {
	case t.err != nil || len(p) == 0:
	case len(p) >= 2:
		if _, t.err = t.w.Write(t.tail); t.err == nil {
			_, t.err = t.w.Write(p[:len(p)-2])
		}
		t.tail = append(t.tail[:0], p[len(p)-2:]...)
	default:
		if t.tail = append(t.tail, p[0]); len(t.tail) > 2 {
			_, t.err = t.w.Write(t.tail[:1])
			t.tail = append(t.tail[:0], t.tail[1:]...)
		}
	}
}

// end writes the held bytes, without a final eol when trim.
func (t *tailWriter) end(trim bool, eol string) {
	b := t.tail
	if trim {
		b = bytes.TrimSuffix(b, []byte(eol))
	}
	if t.err == nil {
		_, t.err = t.w.Write(b)
	}
}

// countWriter counts what passes.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// readText reads the whole text of t (in z) for a pattern replace, allocated once at its
// size; it must be UTF-8 without NUL.
func readText(f io.Reader, z *core.Zone, t core.Target) (string, error) {
	var b strings.Builder
	b.Grow(int(t.Size))
	if _, err := io.Copy(&b, io.LimitReader(f, t.Size)); err != nil {
		return "", core.WriteError(err, z, t.Shown)
	}
	text := b.String()
	if !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0 {
		return "", notText(t)
	}
	return text, nil
}

// replacePattern plans the substitution of the first (or every) match of the pattern in
// the whole text by content (literal except group references, see parseTemplate): the
// result's size and the matches, and the function that writes it. The matches are found
// twice (to size the result, then to write it) rather than held.
func (e textEdit) replacePattern(text, content string) (int64, int, func(io.Writer) error) {
	tmpl := parseTemplate(content, e.re)
	size, count := int64(len(text)), 0
	m := newMatcher(e.re, text, e.matchAll)
	for a := m.next(); a != nil; a = m.next() {
		count++
		size -= int64(a[1] - a[0])
		for _, p := range tmpl {
			if p.group < 0 {
				size += int64(len(p.text))
			} else if s, t := a[2*p.group], a[2*p.group+1]; s >= 0 {
				size += int64(t - s)
			}
		}
	}
	return size, count, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		prev := 0
		m := newMatcher(e.re, text, e.matchAll)
		for a := m.next(); a != nil; a = m.next() {
			if _, err := bw.WriteString(text[prev:a[0]]); err != nil {
				return err // the write ended: stop matching
			}
			for _, p := range tmpl {
				if p.group < 0 {
					_, _ = bw.WriteString(p.text)
				} else if s, t := a[2*p.group], a[2*p.group+1]; s >= 0 {
					_, _ = bw.WriteString(text[s:t])
				}
			}
			prev = a[1]
		}
		_, _ = bw.WriteString(text[prev:])
		return bw.Flush() // a bufio.Writer keeps its first error
	}
}
