package owuitest

import (
	"crypto/rand"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"

	"github.com/fileshed/fileshed/core/owui"
)

// upload is POST /api/v1/files/: a multipart "file" becomes the user's file
// (Open WebUI's upload_file; the name kept as sent, the type from its extension).
func (s *Server) upload(w http.ResponseWriter, r *http.Request, _ string, u owui.User) {
	s.mu.Lock()
	refuse := s.refuseUploads
	s.mu.Unlock()
	if refuse {
		writeJSON(w, http.StatusBadRequest, object{"detail": "Error uploading file"})
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		writeJSON(w, http.StatusBadRequest, object{"detail": "No file"})
		return
	}
	defer f.Close()
	content, err := io.ReadAll(f)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, object{"detail": "Bad upload"})
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	s.AddFile(u.ID, owui.FileInfo{ID: id, Filename: hdr.Filename, ContentType: mime.TypeByExtension(path.Ext(hdr.Filename))}, content)
	s.mu.Lock()
	rec := fileRecord(s.files[id])
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, rec)
}

// deleteFile is DELETE /api/v1/files/{id} (owner only; others get 404).
func (s *Server) deleteFile(w http.ResponseWriter, r *http.Request, _ string, u owui.User) {
	if _, ok := s.ownFile(w, r, u); !ok {
		return
	}
	s.mu.Lock()
	delete(s.files, r.PathValue("id"))
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, object{"message": "File deleted successfully"})
}

// Content returns a stored file's bytes and whether it exists (for assertions).
func (s *Server) Content(id string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[id]
	return f.content, ok
}
