package core

// Codes of the write-side file operations (shed_create_file, shed_patch_text,
// shed_patch_bytes, shed_delete, shed_rename, shed_convert_eol).
const (
	NotAFile        Code = "NOT_A_FILE"
	FileExists      Code = "FILE_EXISTS"
	PatternNotFound Code = "PATTERN_NOT_FOUND"
	ProtectedPath   Code = "PROTECTED_PATH"
	InvalidMode     Code = "INVALID_MODE"
	InvalidFormat   Code = "INVALID_FORMAT"
)

func init() {
	addHints(map[Code]string{
		NotAFile:        "The path is a directory: give a file path (see shed_tree)",
		FileExists:      "Choose another destination, or delete it first with shed_delete",
		PatternNotFound: "Check the pattern (RE2 syntax) against the file with shed_read, or use line=N",
		ProtectedPath:   "This path is protected (the zone root, .git): name a file or folder inside it, see shed_tree",
		InvalidMode:     "Use to='unix' (LF) or to='dos' (CRLF)",
		InvalidFormat:   "The file is not in the expected format: check it with shed_file_type",
	})
}
