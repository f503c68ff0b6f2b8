package core

// Codes of the links family (shed_link_create, shed_link_list, shed_link_delete).
// MISSING_FILE_ID and NOT_A_FILESHED_LINK keep the original's spelling (reference §5.29);
// LINK_NOT_FOUND is ours: an unknown link id, or another user's (both answer the same).
const (
	MissingFileID    Code = "MISSING_FILE_ID"
	NotAFileshedLink Code = "NOT_A_FILESHED_LINK"
	LinkNotFound     Code = "LINK_NOT_FOUND"
)

func init() {
	addHints(map[Code]string{
		MissingFileID:    "Give link_id: list your links with shed_link_list",
		NotAFileshedLink: "Only links made by shed_link_create can be deleted here: see shed_link_list",
		LinkNotFound:     "List your links with shed_link_list",
	})
}
