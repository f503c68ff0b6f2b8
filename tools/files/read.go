package files

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/textcap"
)

// ReadInput is the input of shed_read.
type ReadInput struct {
	core.ZoneArgs
	Path      string `json:"path" required:"true"`
	StartLine int64  `json:"start_line,omitempty" default:"1" minimum:"1"`
	EndLine   int64  `json:"end_line,omitempty" minimum:"1" absent:"0"`
	Pages     string `json:"pages,omitempty" doc:"PDF pages, e.g. 3-5"`
	Offset    *int64 `json:"offset,omitempty" minimum:"0" doc:"Byte offset (long lines)"`
	Anchors   bool   `json:"anchors,omitempty" doc:"Lines as N:hh|text"`
}

// readChunk is the streaming buffer size: memory per read is this plus the output cap.
const readChunk = 64 << 10

// Read answers shed_read (reference §5.5, FUNCTIONS.md item 11): the text of a file, or of a
// line range, streamed so that memory stays bounded whatever the file's size. Binary content
// (textcap.LooksBinary on the first 8 KB) is refused with BINARY_FILE; bytes that are not UTF-8 are
// shown as U+FFFD and counted in invalid_utf8_bytes; output beyond max_output_default bytes
// keeps its head and tail around a marker naming the lines cut.
func (s *Tools) Read(ctx context.Context, c core.Caller, in ReadInput) (core.Result, error) {
	if in.StartLine < 1 {
		return core.Result{}, core.Errf(core.InvalidParameter, "start_line must be >= 1 (first line is 1, not 0)").
			With("start_line", in.StartLine).WithHint("Use start_line=1 for the first line")
	}
	if in.EndLine < 0 || (in.EndLine > 0 && in.EndLine < in.StartLine) {
		return core.Result{}, core.Errf(core.InvalidParameter, "end_line must be >= start_line (got %d < %d)", in.EndLine, in.StartLine).
			With("start_line", in.StartLine).With("end_line", in.EndLine).
			WithHint("Use end_line >= start_line, or omit end_line to read to the end")
	}
	o, err := s.OpenRead(ctx, c, in.ZoneArgs, in.Path, core.ReadDirError)
	if err != nil {
		return core.Result{}, err
	}
	defer o.Close()
	z, rel, f, info := o.Z, o.Rel, o.F, o.Info

	sample, err := readSample(z, f, in.Path)
	if err != nil {
		return core.Result{}, err
	}
	if isPDF(sample) {
		// A UTF-8 text file that only starts like a PDF is read as text.
		res, err := s.readPDF(ctx, c, z, rel, info.Size(), in)
		if e, ok := core.AsError(err); !ok || e.Code != core.PdfUnreadable || !validPrefix(sample, len(sample) == textcap.SniffLen) {
			return res, err
		}
	}
	if in.Pages != "" {
		return core.Result{}, core.Errf(core.InvalidParameter, "pages is for PDFs; %s is not one", rel).With("path", rel).With("pages", in.Pages).
			WithHint("Use start_line/end_line, or offset for very long lines")
	}
	if textcap.LooksBinary(sample) {
		return core.Result{}, core.Errf(core.BinaryFile, "Binary file: %s (%s, %d bytes)", rel, core.DetectMIME(sample), info.Size()).
			With("path", rel).With("zone", z.Label).With("size", info.Size()).With("mime", core.DetectMIME(sample)).
			WithHint("Use shed_read_bytes (hex or base64, with offset/length) or shed_hexdump to see its bytes; shed_file_type identifies it")
	}
	if in.Offset != nil {
		return s.readOffset(z, rel, f, info.Size(), sample, *in.Offset)
	}
	out := textcap.NewHeadTail(max(s.Config().MaxOutputDefault, 1))
	var w io.Writer = out
	if in.Anchors {
		w = &anchorWriter{w: out, n: in.StartLine}
	}
	// The hash of the whole content, from the bytes this read streams anyway (copyLines
	// goes on to the end to count the lines): there when it reached the end.
	sum := core.NewContentHash()
	total, err := copyLines(w, io.TeeReader(io.MultiReader(bytes.NewReader(sample), f), sum), in.StartLine, in.EndLine)
	if err != nil {
		return core.Result{}, core.ReadFail(err, z, rel)
	}
	if c, ok := w.(io.Closer); ok {
		_ = c.Close() // the last line, when it has no terminator
	}
	eof := total >= 0
	if eof && in.StartLine > max(total, 1) {
		return core.Result{}, core.Errf(core.InvalidParameter, "start_line %d is beyond the end of the file (%d lines)", in.StartLine, total).
			With("start_line", in.StartLine).With("total_lines", total).
			WithHint("Use start_line between 1 and %d", max(total, 1))
	}
	last := in.EndLine
	if eof && (last == 0 || last > total) {
		last = total
	}
	data := readResult{Encrypted: confine.IsSealedFile(f), EndLine: last, Group: z.GroupID, LineEndings: textcap.LineEndings(sample),
		Path: rel, Size: info.Size(), StartLine: in.StartLine, Zone: z.Label}
	if eof {
		data.TotalLines, data.Hash = &total, sum.Sum()
	}
	head, tail, cut := out.Parts()
	content, bad := textcap.ValidText(head)
	if tail != nil {
		ts, tbad := textcap.ValidText(tail)
		from := in.StartLine + cut.HeadNewlines
		to := from + cut.Lines - 1
		content += textcap.Marker(cut, fmt.Sprintf("lines %d-%d not shown, read them with start_line=%d end_line=%d", from, to, from, to)) + ts
		bad += tbad
		lines := to - from + 1
		data.CutBytes, data.CutLines = &cut.Bytes, &lines
	}
	data.Content, data.Truncated = content, tail != nil
	msg := fmt.Sprintf("Read %d characters", utf8.RuneCountInString(content))
	if in.StartLine > 1 || in.EndLine > 0 {
		msg += fmt.Sprintf(" (lines %d-%d)", in.StartLine, last)
	}
	if bad > 0 {
		data.InvalidUTF8Bytes = bad
		msg += fmt.Sprintf("; %d bytes are not UTF-8 and are shown as U+FFFD (shed_read_bytes shows them exactly)", bad)
	}
	if tail != nil {
		msg += fmt.Sprintf("; output capped at %d bytes, %d bytes cut (see the marker)", s.Config().MaxOutputDefault, cut.Bytes)
	}
	return core.Result{Data: data, Message: msg}, nil
}

// readResult is the answer of shed_read by lines (fields in the order of the JSON keys,
// alphabetical, as the map it replaces wrote them): cut_bytes and cut_lines when the output
// cap cut the middle, group in group zones, invalid_utf8_bytes when some were replaced,
// total_lines when the count reached the end of the file (0 included).
type readResult struct {
	Content          string `json:"content"`
	CutBytes         *int64 `json:"cut_bytes,omitempty"`
	CutLines         *int64 `json:"cut_lines,omitempty"`
	Encrypted        bool   `json:"encrypted"`
	EndLine          int64  `json:"end_line"`
	Group            string `json:"group,omitempty"`
	Hash             string `json:"hash,omitempty"`
	InvalidUTF8Bytes int    `json:"invalid_utf8_bytes,omitempty"`
	LineEndings      string `json:"line_endings"`
	Path             string `json:"path"`
	Size             int64  `json:"size"`
	StartLine        int64  `json:"start_line"`
	TotalLines       *int64 `json:"total_lines,omitempty"`
	Truncated        bool   `json:"truncated"`
	Zone             string `json:"zone"`
}

// countBudget bounds how far past the requested range copyLines keeps counting lines to
// report total_lines: counting is cheap and needs no memory, but not free on huge files.
const countBudget = 64 << 20

// copyLines writes lines [start, end] (1-based, end 0 = to the end) of r to w, reading in
// chunks. After line end it only counts newlines, for at most countBudget more bytes. total
// is the file's line count, or -1 when the budget ran out first. A last line without '\n'
// counts as a line; an empty file has 0 lines.
func copyLines(w io.Writer, r io.Reader, start, end int64) (total int64, err error) {
	buf := make([]byte, readChunk)
	line, last := int64(1), byte('\n')
	done, counted := false, int64(0)
	for {
		n, rerr := r.Read(buf)
		chunk := buf[:n]
		if n > 0 {
			last = chunk[n-1]
		}
		if done {
			line += int64(bytes.Count(chunk, []byte{'\n'}))
			if counted += int64(n); counted > countBudget {
				return -1, nil
			}
		}
		for !done && len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			seg := chunk
			if i >= 0 {
				seg = chunk[:i+1]
			}
			if line >= start {
				_, _ = w.Write(seg) // textcap.HeadTail never fails
			}
			if i < 0 {
				break
			}
			chunk = chunk[i+1:]
			line++
			if end > 0 && line > end {
				done = true
				line += int64(bytes.Count(chunk, []byte{'\n'}))
			}
		}
		if rerr == io.EOF {
			if last == '\n' {
				return line - 1, nil
			}
			return line, nil
		}
		if rerr != nil {
			return 0, rerr
		}
	}
}

// readSample reads up to textcap.SniffLen bytes from the start of f.
func readSample(z *core.Zone, f afero.File, shown string) ([]byte, error) {
	b := make([]byte, textcap.SniffLen)
	n, err := io.ReadFull(f, b)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, core.ReadFail(err, z, shown)
	}
	return b[:n], nil
}
