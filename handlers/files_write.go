package handlers

import (
	"github.com/danielgtaylor/huma/v2"
)

// registerFilesWrite registers the write-side file tools.
func registerFilesWrite(api huma.API, d Deps) {
	s := d.Tools
	cfg := d.cfg
	text := cfg.MaxBodyBytes()
	// hex doubles the content and base64 adds a third: unless the administrator set
	// max_body_mb, leave room for a max_file_size_mb file in hex (FILE_TOO_LARGE is then
	// enforced on the decoded size).
	encoded := text
	if cfg.MaxBodyMB == 0 {
		encoded = int64(2*cfg.MaxFileSizeMB+1) << 20
	}
	tool(api, d, toolSpec{name: "shed_create_file", hints: destructive | idempotent, summary: "Create or replace a whole file", maxBody: encoded,
		description: "Create or replace a whole file (file_type=bytes: content in content_format)."}, s.Files.CreateFile)
	tool(api, d, toolSpec{name: "shed_patch_text", hints: destructive, summary: "Edit a text file", maxBody: text,
		description: "Edit a text file at a line, anchor or pattern (regex), or overwrite."}, s.Files.PatchText)
	tool(api, d, toolSpec{name: "shed_patch_bytes", hints: destructive, summary: "Edit a binary file", maxBody: encoded,
		description: "Edit a binary file at a position (offset, length), or overwrite."}, s.Files.PatchBytes)
	tool(api, d, toolSpec{name: "shed_delete", hints: destructive | idempotent, summary: "Delete a file or folder",
		description: "Delete a file or a folder with its content."}, s.Files.Delete)
	tool(api, d, toolSpec{name: "shed_rename", hints: destructive, summary: "Move or rename inside a zone",
		description: "Move or rename a file or folder within a zone."}, s.Files.Rename)
	tool(api, d, toolSpec{name: "shed_convert_eol", hints: destructive | idempotent, summary: "Convert line endings",
		description: "Convert a text file's line endings (to=unix or dos)."}, s.Files.ConvertEOL)
}
