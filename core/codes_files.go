package core

// The codes of the file tools: writes, reads, archives, imports.

// Codes of the write-side file operations (shed_create_file, shed_patch_text,
// shed_patch_bytes, shed_delete, shed_rename, shed_convert_eol).
const (
	NotAFile        Code = "NOT_A_FILE"
	FileExists      Code = "FILE_EXISTS"
	PatternNotFound Code = "PATTERN_NOT_FOUND"
	ProtectedPath   Code = "PROTECTED_PATH"
	InvalidMode     Code = "INVALID_MODE"
	InvalidFormat   Code = "INVALID_FORMAT"
	// FileChanged refuses a write given expected_hash when the file holds another version
	// (details.current_hash), or exists when "new" was expected (core/tx_expect.go).
	FileChanged Code = "FILE_CHANGED"
	// AnchorMismatch refuses shed_patch_text's anchor "N:hh" when line N no longer has
	// the hash hh (details: the line now, and the nearest line that has hh).
	AnchorMismatch Code = "ANCHOR_MISMATCH"
)

func init() {
	addHints(map[Code]string{
		NotAFile:        "The path is a directory: give a file path (see shed_tree)",
		FileExists:      "Choose another destination, or delete it first with shed_delete",
		PatternNotFound: "Check the pattern (RE2 syntax) against the file with shed_read, or use line=N",
		ProtectedPath:   "This path is protected (the zone root, .git): name a file or folder inside it, see shed_tree",
		InvalidMode:     "Use to='unix' (LF) or to='dos' (CRLF)",
		InvalidFormat:   "The file is not in the expected format: check it with shed_file_type",
		FileChanged:     "Read the file again with shed_read and redo the edit, with expected_hash=details.current_hash",
		AnchorMismatch:  "Use the anchor in details.nearest (the line moved), or read the lines again with shed_read(anchors=true)",
	})
}

// Codes of the read-side file operations (shed_read, shed_read_bytes, shed_file_type,
// shed_hexdump). They also answer NOT_A_FILE and INVALID_FORMAT, declared with the write side
// above. BINARY_FILE is ours (FUNCTIONS.md item 11: text reads refuse binary).
const BinaryFile Code = "BINARY_FILE"

func init() {
	addHints(map[Code]string{
		BinaryFile: "Binary content: use shed_read_bytes (hex/base64) or shed_hexdump, and shed_file_type to identify it",
	})
}

// Codes of the archive tools (shed_zip, shed_unzip, shed_zipinfo). INVALID_FORMAT, shared
// with the file tools, is above.
const (
	ZipBomb Code = "ZIP_BOMB"
)

func init() {
	addHints(map[Code]string{
		ZipBomb: "The archive is over the archive limits (see shed_info(action='parameters')): check it with shed_archive(action='info'), or ask an administrator to raise the archive valves",
	})
}

// Codes of shed_import and the zone bridges.
const (
	// MissingFileID: shed_import without file_id, filename or import_all, or a chat-wide
	// import where the chat cannot be read (no chat id, or no user token).
	MissingFileID Code = "MISSING_FILE_ID"
)

func init() {
	addHints(map[Code]string{
		MissingFileID: "Pass file_id=<the id of a <file> in the chat's <attached_files>>, or filename=, or import_all=true",
	})
}
