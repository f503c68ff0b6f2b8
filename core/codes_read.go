package core

// Codes of the read-side file operations (shed_read, shed_read_bytes, shed_file_type,
// shed_hexdump). They also answer NOT_A_FILE and INVALID_FORMAT, declared with the write side
// in codes_files.go. BINARY_FILE is ours (FUNCTIONS.md item 11: text reads refuse binary).
const BinaryFile Code = "BINARY_FILE"

func init() {
	addHints(map[Code]string{
		BinaryFile: "Binary content: use shed_read_bytes (hex/base64) or shed_hexdump, and shed_file_type to identify it",
	})
}
