package handlers_test

import (
	"testing"

	"github.com/fileshed/fileshed/internal/golden"
)

// TestGoldenTransfer pins one answer per shape the transfer family builds: a bridge of a
// file and of a folder, committed, replacing; an import of one file, of several with a
// failure, and the refusal when every file failed (its details list the failures).
func TestGoldenTransfer(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(uploadsDir+"/report.pdf", "pdf!")
	e.write(uploadsDir+"/batch/a.csv", "a")
	e.write(uploadsDir+"/batch/sub/b.csv", "bb")
	e.write("users/local/Storage/data/s.txt", "storage\n")
	pinAnswer(t, "transfer_bridge_file", e.post("shed_move_uploads_to_storage", map[string]any{"src": "report.pdf", "dest": "in/report.pdf"}, nil))
	pinAnswer(t, "transfer_bridge_folder", e.post("shed_move_uploads_to_storage", map[string]any{"src": "batch", "dest": "in/"}, nil))
	pinAnswer(t, "transfer_bridge_documents", e.post("shed_copy_storage_to_documents", map[string]any{"src": "s.txt", "dest": "s.txt"}, nil), "commit")
	pinAnswer(t, "transfer_bridge_replaced", e.post("shed_copy_storage_to_documents", map[string]any{"src": "s.txt", "dest": "s.txt", "overwrite": true}, nil), "commit")

	w, fake := importWorld(t, nil)
	pinAnswer(t, "transfer_import", w.post("shed_import", map[string]any{"file_id": "f-report"}, alice("chat-1")))
	fake.AddChat("chat-1", "alice-1", "f-report", "f-notes", "f-ghost")
	pinAnswer(t, "transfer_import_errors", w.post("shed_import", map[string]any{"import_all": true}, alice("chat-1")))
	fake.AddChat("chat-2", "alice-1", "f-ghost", "f-bob")
	r := w.post("shed_import", map[string]any{"import_all": true}, alice("chat-2"))
	wantError(t, r, "FILE_NOT_FOUND")
	golden.JSON(t, "transfer_import_all_failed", []byte(r.raw))
}
