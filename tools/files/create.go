package files

import (
	"context"
	"strings"

	"github.com/fileshed/fileshed/core"
)

// CreateFileInput is the input of shed_create_file.
type CreateFileInput struct {
	core.ZoneArgs
	Path          string `json:"path" required:"true"`
	Content       string `json:"content,omitempty"`
	FileType      string `json:"file_type,omitempty" default:"text" enum:"text,bytes"`
	ContentFormat string `json:"content_format,omitempty" default:"hex" enum:"hex,base64,raw"`
	Message       string `json:"message,omitempty" doc:"Commit message (documents, group)"`
	Mode          string `json:"mode,omitempty" doc:"Group zone, new file: owner, group or owner_ro"`
	ExpectedHash  string `json:"expected_hash,omitempty" doc:"Hash of your last read; \"new\": must not exist"`
}

// CreateFile creates or replaces a whole file (reference §5.2): shed_patch_text or
// shed_patch_bytes with overwrite=true.
func (s *Tools) CreateFile(ctx context.Context, c core.Caller, in CreateFileInput) (core.Result, error) {
	switch strings.ToLower(strings.TrimSpace(in.FileType)) {
	case "", "text":
		return s.PatchText(ctx, c, PatchTextInput{ZoneArgs: in.ZoneArgs, Path: in.Path, Content: in.Content,
			Position: "end", Overwrite: true, Safe: true, Message: in.Message, Mode: in.Mode, ExpectedHash: in.ExpectedHash})
	case "bytes":
		return s.PatchBytes(ctx, c, PatchBytesInput{ZoneArgs: in.ZoneArgs, Path: in.Path, Content: in.Content,
			ContentFormat: in.ContentFormat, Position: "end", Offset: -1, Length: -1, Overwrite: true, Safe: true,
			Message: in.Message, Mode: in.Mode, ExpectedHash: in.ExpectedHash})
	}
	return core.Result{}, core.Errf(core.InvalidParameter, "file_type must be 'text' or 'bytes', got: %q", in.FileType).
		With("file_type", in.FileType).WithHint("Use file_type='text' for text files or file_type='bytes' for binary")
}
