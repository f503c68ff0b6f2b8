package files

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/confine"
)

// ReadBytesInput is the input of shed_read_bytes.
type ReadBytesInput struct {
	core.ZoneArgs
	Path         string `json:"path" required:"true"`
	OutputFormat string `json:"output_format,omitempty" default:"hex" enum:"hex,base64"`
	Offset       int64  `json:"offset,omitempty" default:"0" minimum:"0"`
	Length       int64  `json:"length,omitempty" minimum:"0" absent:"-1" doc:"Omit = to the end"`
}

// ReadBytes answers shed_read_bytes (reference §5.6): a contiguous byte range, hex or base64.
// Unlike the original (no cap: a whole file went into the model's context), the encoded
// content is capped at max_output_default characters; a capped answer says truncated and
// gives next_offset to continue. The cap is not head+tail: a byte range must stay contiguous
// to be decoded or patched back. Only the requested range is read.
func (s *Tools) ReadBytes(ctx context.Context, c core.Caller, in ReadBytesInput) (core.Result, error) {
	format := strings.ToLower(strings.TrimSpace(in.OutputFormat))
	if format != "hex" && format != "base64" {
		return core.Result{}, core.Errf(core.InvalidParameter, "Invalid output_format: %s. Valid: hex, base64", in.OutputFormat).
			With("output_format", in.OutputFormat).WithHint("Use output_format='hex' or output_format='base64'")
	}
	if in.Offset < 0 {
		return core.Result{}, core.Errf(core.InvalidParameter, "Offset must be >= 0").With("offset", in.Offset).
			WithHint("offset counts from the start of the file; for the last N bytes use offset = total_size - N (size from shed_file_type)")
	}
	o, err := s.OpenRead(ctx, c, in.ZoneArgs, in.Path, core.ReadDirError)
	if err != nil {
		return core.Result{}, err
	}
	defer o.Close()
	z, rel, f, info := o.Z, o.Rel, o.F, o.Info

	size := info.Size()
	limit := bytesCap(format, s.Config().MaxOutputDefault)
	want := int64(0)
	if in.Offset < size {
		want = size - in.Offset
		if in.Length >= 0 { // -1: not given (a negative length sent is refused by the decoder)
			want = min(want, in.Length)
		}
	}
	truncated := want > limit
	want = min(want, limit)
	buf := make([]byte, want)
	n, err := f.ReadAt(buf, in.Offset)
	if err != nil && err != io.EOF {
		return core.Result{}, core.ReadFail(err, z, rel)
	}
	buf = buf[:n] // the file may have shrunk since fstat
	content := hex.EncodeToString(buf)
	if format == "base64" {
		content = base64.StdEncoding.EncodeToString(buf)
	}
	data := readBytesResult{BytesRead: n, Content: content, ContentFormat: format, Encrypted: confine.IsSealedFile(f),
		Group: z.GroupID, Offset: in.Offset, Path: rel, TotalSize: size, Truncated: truncated, Zone: z.Label}
	if in.Offset == 0 && int64(n) == size {
		data.Hash = core.HashOf(buf) // the whole file is in this answer
	}
	msg := fmt.Sprintf("Read %d bytes", n)
	if truncated {
		next := in.Offset + int64(n)
		data.NextOffset = &next
		msg += fmt.Sprintf(" (capped at %d bytes per call: continue with offset=%d)", limit, next)
	}
	return core.Result{Data: data, Message: msg}, nil
}

// readBytesResult is the answer of shed_read_bytes (fields in the order of the JSON keys,
// alphabetical, as the map it replaces wrote them): group in group zones, offset when not 0,
// next_offset when the cap cut the read.
type readBytesResult struct {
	BytesRead     int    `json:"bytes_read"`
	Content       string `json:"content"`
	ContentFormat string `json:"content_format"`
	Encrypted     bool   `json:"encrypted"`
	Group         string `json:"group,omitempty"`
	Hash          string `json:"hash,omitempty"`
	NextOffset    *int64 `json:"next_offset,omitempty"`
	Offset        int64  `json:"offset,omitempty"`
	Path          string `json:"path"`
	TotalSize     int64  `json:"total_size"`
	Truncated     bool   `json:"truncated"`
	Zone          string `json:"zone"`
}

// bytesCap is how many raw bytes fit in maxOutput characters of the encoding: two hex digits
// per byte; four base64 characters per three bytes, a multiple of three so that consecutive
// capped reads concatenate into valid base64.
func bytesCap(format string, maxOutput int) int64 {
	if format == "base64" {
		return max(int64(maxOutput)/4*3, 3)
	}
	return max(int64(maxOutput)/2, 1)
}
