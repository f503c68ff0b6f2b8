package files

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fileshed/fileshed/core"
)

// PatchBytesInput is the input of shed_patch_bytes.
type PatchBytesInput struct {
	core.ZoneArgs
	Path          string `json:"path" required:"true"`
	Content       string `json:"content" required:"true" empty:"value" doc:"Bytes in content_format"`
	ContentFormat string `json:"content_format,omitempty" default:"hex" enum:"hex,base64,raw"`
	Position      string `json:"position,omitempty" default:"end" enum:"start,end,at,replace"`
	Offset        int64  `json:"offset,omitempty" minimum:"0" absent:"-1" doc:"Byte offset (at, replace)"`
	Length        int64  `json:"length,omitempty" minimum:"0" absent:"-1" doc:"Bytes replaced (replace)"`
	Overwrite     bool   `json:"overwrite,omitempty"`
	Safe          bool   `json:"safe,omitempty" default:"true" doc:"Refuse if another conversation holds the file in a locked edit"`
	Message       string `json:"message,omitempty" doc:"Commit message (documents, group)"`
	Mode          string `json:"mode,omitempty" doc:"Group zone, new file: owner, group or owner_ro"`
	ExpectedHash  string `json:"expected_hash,omitempty" doc:"Hash of your last read; \"new\": must not exist"`
}

// PatchBytes edits a binary file (reference §5.4): append, prepend, insert at an offset,
// replace a byte range, or overwrite. The old content is streamed around the new bytes
// (never loaded whole), the write is atomic and the quota is reserved before it.
func (s *Tools) PatchBytes(ctx context.Context, c core.Caller, in PatchBytesInput) (core.Result, error) {
	format := strings.ToLower(strings.TrimSpace(in.ContentFormat))
	if format == "" {
		format = "hex"
	}
	content, n, err := decodeContent(in.Content, format)
	if err != nil {
		return core.Result{}, err
	}
	z, rel, err := s.ZonePath(ctx, c, in.ZoneArgs, in.Path, true)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	position, err := bytePosition(in)
	if err != nil {
		return core.Result{}, err
	}
	message := in.Message
	if message == "" {
		message = fmt.Sprintf("Patch bytes %s: %s", rel, position)
	}
	tx, t, err := s.BeginWrite(ctx, c, z, rel, in.Path, core.Edit{Tool: "Patch bytes", Message: message, Mode: in.Mode, Unsafe: !in.Safe, Expect: in.ExpectedHash})
	if err != nil {
		return core.Result{}, err
	}
	defer tx.Close()
	if !t.Exists && position != "start" && position != "end" {
		return core.Result{}, core.NeedsFile(z, in.Path, position, "create it with position='end'")
	}
	if (position == "at" || position == "replace") && in.Offset > t.Size {
		return core.Result{}, core.Errf(core.InvalidParameter, "Offset %d beyond file size (%d)", in.Offset, t.Size).
			With("offset", in.Offset).With("file_size", t.Size).WithHint("Use an offset between 0 and %d", t.Size)
	}
	var w core.Write
	affected := n
	switch {
	case in.Overwrite || !t.Exists:
		w.Size, w.Body = n, content
	default:
		off, removed := t.Size, int64(0) // end
		switch position {
		case "start":
			off = 0
		case "at":
			off = in.Offset
		case "replace":
			off, removed = in.Offset, min(in.Length, t.Size-in.Offset)
			affected = removed
		}
		w.Size = t.Size + n - removed
		if err := s.CheckSize(w.Size); err != nil {
			return core.Result{}, err // the size check, before reading anything
		}
		f, err := core.OpenOld(z, t)
		if err != nil {
			return core.Result{}, err
		}
		defer f.Close()
		w.Body = io.MultiReader(io.NewSectionReader(f, 0, off), content,
			io.NewSectionReader(f, off+removed, t.Size-off-removed))
	}
	hash, err := tx.WriteFile(w)
	if err != nil {
		return core.Result{}, err
	}
	verb := "patched"
	switch {
	case !t.Exists:
		verb = "created"
	case in.Overwrite:
		verb = "overwritten"
	}
	shownPos := position
	if in.Overwrite {
		shownPos = "overwrite"
	}
	data := patchBytesResult{BytesAffected: affected, BytesWritten: n, ContentFormat: format, Created: !t.Exists,
		FileSize: w.Size, Path: rel, Position: shownPos, SafeMode: in.Safe, Zone: in.Zone}
	if in.Offset >= 0 && !in.Overwrite {
		data.Offset = &in.Offset
	}
	data.Group, data.Commit = writeFields(z, hash)
	data.Hash = tx.ContentHash()
	return core.Result{Data: data, Message: fmt.Sprintf("File %s: %d bytes written", verb, n)}, nil
}

// patchBytesResult is the answer of shed_patch_bytes; its fields are in the order of the
// JSON keys (alphabetical, as the map it replaces wrote them). offset (given when the
// position used one, 0 included), group and commit are there only when they apply.
type patchBytesResult struct {
	BytesAffected int64  `json:"bytes_affected"`
	BytesWritten  int64  `json:"bytes_written"`
	Commit        string `json:"commit,omitempty"`
	ContentFormat string `json:"content_format"`
	Created       bool   `json:"created"`
	FileSize      int64  `json:"file_size"`
	Group         string `json:"group,omitempty"`
	Hash          string `json:"hash,omitempty"`
	Offset        *int64 `json:"offset,omitempty"`
	Path          string `json:"path"`
	Position      string `json:"position"`
	SafeMode      bool   `json:"safe_mode"`
	Zone          string `json:"zone"`
}

// bytePosition validates position, offset and length (reference §5.4 steps 5-6).
func bytePosition(in PatchBytesInput) (string, error) {
	if in.Offset < -1 {
		return "", core.Errf(core.InvalidParameter, "Offset must be >= 0").With("offset", in.Offset).
			WithHint("Use offset=0 for the start of the file, offset=100 for byte 100, etc.")
	}
	if in.Length < -1 {
		return "", core.Errf(core.InvalidParameter, "Length must be >= 0").With("length", in.Length).
			WithHint("Use length=10 to replace 10 bytes")
	}
	p := strings.ToLower(strings.TrimSpace(in.Position))
	if p == "" {
		p = "end"
	}
	if in.Overwrite {
		return p, nil
	}
	switch p {
	case "start", "end":
	case "at", "replace":
		if in.Offset < 0 {
			return "", core.Errf(core.MissingParameter, "Position '%s' requires 'offset'", p).With("position", p).
				WithHint("Add offset=N (0 is the first byte)")
		}
		if p == "replace" && in.Length < 0 {
			return "", core.Errf(core.MissingParameter, "Position 'replace' requires 'length'").With("position", p).
				WithHint("Add length=N: the number of bytes replaced at offset")
		}
	default:
		err := core.Errf(core.InvalidParameter, "Invalid position: %s. Valid: start, end, at, replace", in.Position).
			With("position", in.Position).With("valid", []string{"start", "end", "at", "replace"})
		if p == "overwrite" {
			err.WithHint("To overwrite the entire file, use overwrite=true instead")
		}
		return "", err
	}
	return p, nil
}

// decodeContent decodes content given as hex (whitespace ignored), base64 (standard
// alphabet, padding optional, whitespace ignored) or raw UTF-8 text, and returns its bytes
// and their count. Raw text is read as it is; hex and base64 are decoded in chunks straight
// into the result, which is allocated once: the content (most of a body of up to twice
// max_file_size_mb) is never copied whole.
func decodeContent(content, format string) (io.Reader, int64, error) {
	var decode func(dst, src []byte) (int, error)
	var size func(n int) int
	switch format {
	case "raw":
		return strings.NewReader(content), int64(len(content)), nil
	case "hex":
		decode, size = hex.Decode, hex.DecodedLen
	case "base64":
		decode, size = base64.RawStdEncoding.Decode, base64.RawStdEncoding.DecodedLen
		content = strings.TrimRight(content, "= \n\r\t") // padding is optional
	default:
		return nil, 0, core.Errf(core.InvalidParameter, "Invalid content_format: %s", format).With("content_format", format).
			With("valid", []string{"hex", "base64", "raw"}).WithHint("Use content_format='hex', 'base64' or 'raw'")
	}
	space := func(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }
	n := len(content)
	for i := range len(content) {
		if space(content[i]) {
			n--
		}
	}
	out := make([]byte, 0, size(n))
	chunk := make([]byte, 0, min(n, 64<<10)) // a multiple of 4: no quantum is split
	done := int64(0)                         // encoded bytes decoded so far
	flush := func() error {
		k, err := decode(out[len(out):cap(out)], chunk)
		out = out[:len(out)+k]
		var at base64.CorruptInputError
		if errors.As(err, &at) {
			err = base64.CorruptInputError(done + int64(at)) // the offset in the whole content
		}
		done += int64(len(chunk))
		chunk = chunk[:0]
		return err
	}
	var err error
	for i := 0; i < len(content) && err == nil; i++ {
		if c := content[i]; !space(c) {
			if chunk = append(chunk, c); len(chunk) == cap(chunk) {
				err = flush()
			}
		}
	}
	if err == nil && len(chunk) > 0 {
		err = flush()
	}
	if err != nil {
		return nil, 0, core.Errf(core.InvalidParameter, "Invalid content encoding: %v", err).With("content_format", format).Because(err).
			WithHint("Content must be valid %s", format)
	}
	return bytes.NewReader(out), int64(len(out)), nil
}
