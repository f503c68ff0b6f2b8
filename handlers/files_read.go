package handlers

import (
	"github.com/danielgtaylor/huma/v2"
)

// registerFilesRead registers the read-side file tools: shed_read, shed_read_bytes,
// shed_file_type and shed_hexdump. All four work in every zone (Uploads included).
func registerFilesRead(api huma.API, d Deps) {
	s := d.Tools
	tool(api, d, toolSpec{name: "shed_read", hints: readOnly, summary: "Read a text file",
		description: "Read a text file (lines, or bytes from offset) or a PDF's pages."}, s.Files.Read)
	tool(api, d, toolSpec{name: "shed_read_bytes", hints: readOnly, summary: "Read bytes as hex or base64",
		description: "Read bytes from offset as hex or base64; continue at next_offset."}, s.Files.ReadBytes)
	tool(api, d, toolSpec{name: "shed_file_type", hints: readOnly, summary: "Detect a file's type",
		description: "MIME type, size, and text encoding or binary."}, s.Files.FileType)
	tool(api, d, toolSpec{name: "shed_hexdump", hints: readOnly, summary: "xxd-like hex dump",
		description: "Hex dump of up to 4096 bytes from offset."}, s.Files.Hexdump)
}
