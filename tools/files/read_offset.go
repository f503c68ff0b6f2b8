package files

import (
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/textcap"
)

// readOffset answers shed_read with offset: up to max_output_default bytes of text from
// byte offset, cut before a character that would not fit, so that next_offset (the first
// byte not shown) continues exactly where this answer stopped: no overlap, no gap. It is
// the way through files whose lines are too long for start_line/end_line.
func (s *Tools) readOffset(z *core.Zone, rel string, f afero.File, size int64, sample []byte, offset int64) (core.Result, error) {
	if offset < 0 || offset > size {
		return core.Result{}, core.Errf(core.InvalidParameter, "offset %d is outside the file (%d bytes)", offset, size).
			With("offset", offset).With("size", size).WithHint("Use offset between 0 and %d", size)
	}
	limit := max(s.Config().MaxOutputDefault, utf8.UTFMax)
	buf := make([]byte, min(int64(limit), size-offset))
	n, err := f.ReadAt(buf, offset)
	if err != nil && err != io.EOF {
		return core.Result{}, core.ReadFail(err, z, rel)
	}
	buf = buf[:n]
	if end := offset + int64(n); end < size {
		buf = buf[:completeRunes(buf)]
	}
	content, bad := textcap.ValidText(buf)
	next := offset + int64(len(buf))
	data := readOffsetResult{Content: content, Encrypted: confine.IsSealedFile(f), Group: z.GroupID, InvalidUTF8Bytes: bad,
		Length: len(buf), LineEndings: textcap.LineEndings(sample), Offset: offset, Path: rel, Size: size,
		Truncated: next < size, Zone: z.Label}
	if offset == 0 && next == size {
		data.Hash = core.HashOf(buf) // the whole file is in this answer
	}
	msg := fmt.Sprintf("Read bytes %d-%d of %d", offset, next, size)
	if next < size {
		data.NextOffset = &next
		msg += fmt.Sprintf("; continue with offset=%d", next)
	}
	if bad > 0 {
		msg += fmt.Sprintf("; %d bytes are not UTF-8 and are shown as U+FFFD", bad)
	}
	return core.Result{Data: data, Message: msg}, nil
}

// readOffsetResult is the answer of shed_read with offset (fields in the order of the JSON
// keys, alphabetical, as the map it replaces wrote them): group in group zones,
// invalid_utf8_bytes when some were replaced, next_offset when the file goes on.
type readOffsetResult struct {
	Content          string `json:"content"`
	Encrypted        bool   `json:"encrypted"`
	Group            string `json:"group,omitempty"`
	Hash             string `json:"hash,omitempty"`
	InvalidUTF8Bytes int    `json:"invalid_utf8_bytes,omitempty"`
	Length           int    `json:"length"`
	LineEndings      string `json:"line_endings"`
	NextOffset       *int64 `json:"next_offset,omitempty"`
	Offset           int64  `json:"offset"`
	Path             string `json:"path"`
	Size             int64  `json:"size"`
	Truncated        bool   `json:"truncated"`
	Zone             string `json:"zone"`
}

// completeRunes is the length of b without a last character cut short by the end of
// the buffer (invalid bytes count as complete: they are shown as U+FFFD).
func completeRunes(b []byte) int {
	for k := 1; k < utf8.UTFMax && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return len(b) - k
			}
			break
		}
	}
	return len(b)
}
