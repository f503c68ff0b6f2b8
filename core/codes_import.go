package core

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
