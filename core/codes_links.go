package core

// Codes of the links family (shed_link_create, shed_link_list, shed_link_delete).
// NOT_A_FILESHED_LINK keeps the original's spelling (reference §5.29); shed_link_delete
// also answers MISSING_FILE_ID (declared with shed_import, codes_import.go). LINK_NOT_FOUND
// is ours: an unknown link id, or another user's (both answer the same).
const (
	NotAFileshedLink Code = "NOT_A_FILESHED_LINK"
	LinkNotFound     Code = "LINK_NOT_FOUND"
)

func init() {
	addHints(map[Code]string{
		NotAFileshedLink: "Only links made by shed_link can be deleted here: see shed_link(action='list')",
		LinkNotFound:     "List your links with shed_link(action='list')",
	})
}
