package handlers

import (
	"github.com/danielgtaylor/huma/v2"
)

// registerFilesRead registers the read-side file tools: shed_read, shed_read_bytes,
// shed_file_type and shed_hexdump. All four work in every zone (Uploads included).
func registerFilesRead(api huma.API, d Deps) {
	s := d.Service
	tool(api, d, toolSpec{name: "shed_read", summary: "Read a text file",
		description: "Text of a file, or lines start_line..end_line (1-based). Long output keeps head and tail around a marker naming the lines cut. Binary files are refused (BINARY_FILE): use shed_read_bytes or shed_hexdump."}, s.Read)
	tool(api, d, toolSpec{name: "shed_read_bytes", summary: "Read bytes as hex or base64",
		description: "Bytes of a file from offset (length bytes, or to the end) as hex or base64. Capped per call: when truncated, continue at next_offset."}, s.ReadBytes)
	tool(api, d, toolSpec{name: "shed_file_type", summary: "Detect a file's type",
		description: "MIME type from the content, magic signature, size, and whether it is text (encoding, line endings) or binary. Tells whether shed_read will work."}, s.FileType)
	tool(api, d, toolSpec{name: "shed_hexdump", summary: "xxd-like hex dump",
		description: "Hex dump (offset, hex, ASCII) of up to 4096 bytes of a file from offset (default 256 bytes from 0)."}, s.Hexdump)
}
