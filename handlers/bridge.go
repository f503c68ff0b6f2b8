package handlers

import (
	"github.com/danielgtaylor/huma/v2"
)

// registerBridges registers shed_import and the four zone bridges.
func registerBridges(api huma.API, d Deps) {
	s := d.Tools
	tool(api, d, toolSpec{name: "shed_import", hints: additive, summary: "Import chat attachments into Uploads",
		description: "Import chat attachments into Uploads: file_id is the id in <attached_files>"}, s.Transfer.Import)
	tool(api, d, toolSpec{name: "shed_move_uploads_to_storage", hints: destructive, summary: "Move from Uploads to Storage",
		description: "Move an imported file or folder from Uploads to Storage"}, s.Transfer.MoveUploadsToStorage)
	tool(api, d, toolSpec{name: "shed_move_uploads_to_documents", hints: destructive, summary: "Move from Uploads to Documents",
		description: "Move an imported file or folder from Uploads to Documents (committed)"}, s.Transfer.MoveUploadsToDocuments)
	tool(api, d, toolSpec{name: "shed_copy_storage_to_documents", hints: destructive, summary: "Copy from Storage to Documents",
		description: "Copy a file or folder from Storage to Documents (committed)"}, s.Transfer.CopyStorageToDocuments)
	tool(api, d, toolSpec{name: "shed_move_documents_to_storage", hints: destructive, summary: "Move from Documents to Storage",
		description: "Move a file or folder from Documents to Storage (removal committed)"}, s.Transfer.MoveDocumentsToStorage)
}
