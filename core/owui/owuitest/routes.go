package owuitest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core/owui"
)

// notFound is Open WebUI's ERROR_MESSAGES.NOT_FOUND detail.
const notFound = "We could not find what you're looking for :/"

// object is a JSON object built in the shape Open WebUI sends.
type object = map[string]any

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/auths/{$}", s.authed(s.me))
	mux.HandleFunc("GET /api/v1/groups/{$}", s.authed(s.listGroups(true)))
	mux.HandleFunc("GET /api/v1/users/groups", s.authed(s.listGroups(false)))
	mux.HandleFunc("POST /api/v1/groups/id/{id}/users", s.authed(s.groupUsers))
	mux.HandleFunc("GET /api/v1/files/{id}", s.authed(s.fileMeta))
	mux.HandleFunc("GET /api/v1/files/{id}/content", s.authed(s.fileContent))
	mux.HandleFunc("GET /api/v1/chats/{id}", s.authed(s.chat))
	mux.HandleFunc("POST /api/v1/files/{$}", s.authed(s.upload))
	mux.HandleFunc("DELETE /api/v1/files/{id}", s.authed(s.deleteFile))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, object{"detail": "Not Found"})
	})
	return s.gate(mux)
}

// gate counts every request, then applies SetDown and SetDelay.
func (s *Server) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls[r.URL.Path]++
		down, delay, changed := s.down, s.delay, s.delayChanged
		s.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-changed:
			case <-r.Context().Done():
				return
			}
		}
		if down {
			writeJSON(w, http.StatusServiceUnavailable, object{"detail": "Service Unavailable"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authed resolves the bearer token as Open WebUI's get_verified_user does.
func (s *Server) authed(h func(http.ResponseWriter, *http.Request, string, owui.User)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		s.mu.Lock()
		u, ok := s.tokens[token]
		s.mu.Unlock()
		if !strings.EqualFold(scheme, "bearer") || token == "" || !ok {
			writeJSON(w, http.StatusUnauthorized, object{"detail": "Not authenticated"})
			return
		}
		h(w, r, token, u)
	}
}

func (s *Server) me(w http.ResponseWriter, _ *http.Request, token string, u owui.User) {
	writeJSON(w, http.StatusOK, object{
		"id": u.ID, "email": u.Email, "name": u.Name, "role": u.Role,
		"profile_image_url": "/user.png", "token": token, "token_type": "Bearer",
		"expires_at": nil, "permissions": object{"chat": object{"file_upload": true}},
	})
}

// listGroups answers GET /api/v1/groups/ (adminSeesAll: every group to an administrator)
// and GET /api/v1/users/groups (the groups the user is a member of, whatever its role).
func (s *Server) listGroups(adminSeesAll bool) func(http.ResponseWriter, *http.Request, string, owui.User) {
	return func(w http.ResponseWriter, _ *http.Request, _ string, u owui.User) {
		s.writeGroups(w, func(g owui.Group) bool {
			return adminSeesAll && u.Role == "admin" || slices.Contains(g.UserIDs, u.ID)
		})
	}
}

// writeGroups writes the groups listed keeps, as Open WebUI's GroupResponse records.
func (s *Server) writeGroups(w http.ResponseWriter, listed func(owui.Group) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []object{}
	for _, g := range s.groups {
		if !listed(g) {
			continue
		}
		ids := append([]string{}, g.UserIDs...)
		o := object{
			"id": g.ID, "user_id": "admin", "name": g.Name, "description": "",
			"permissions": object{}, "data": nil, "meta": nil,
			"user_ids": ids, "member_count": len(ids),
			"created_at": 1700000000, "updated_at": 1700000000,
		}
		if s.noMemberLists {
			delete(o, "user_ids")
		}
		out = append(out, o)
	}
	writeJSON(w, http.StatusOK, out)
}

// groupUsers is POST /api/v1/groups/id/{id}/users (get_admin_user): the members of a
// group as UserInfoResponse records; an unknown group has none (Open WebUI answers []).
func (s *Server) groupUsers(w http.ResponseWriter, r *http.Request, _ string, u owui.User) {
	if u.Role != "admin" {
		writeJSON(w, http.StatusUnauthorized, object{"detail": "You do not have permission to access this resource. Please contact your administrator for assistance."})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []object{}
	for _, g := range s.groups {
		if g.ID != r.PathValue("id") {
			continue
		}
		for _, id := range g.UserIDs {
			rec := object{"id": id, "name": id, "email": "", "role": "user", "profile_image_url": "/user.png"}
			for _, tu := range s.tokens {
				if tu.ID == id {
					rec["name"], rec["email"], rec["role"] = tu.Name, tu.Email, tu.Role
				}
			}
			out = append(out, rec)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// ownFile returns the file if u owns it; otherwise it has answered 404.
func (s *Server) ownFile(w http.ResponseWriter, r *http.Request, u owui.User) (file, bool) {
	s.mu.Lock()
	f, ok := s.files[r.PathValue("id")]
	s.mu.Unlock()
	if !ok || f.info.UserID != u.ID && u.Role != "admin" {
		writeJSON(w, http.StatusNotFound, object{"detail": notFound})
		return file{}, false
	}
	return f, true
}

func (s *Server) fileMeta(w http.ResponseWriter, r *http.Request, _ string, u owui.User) {
	if f, ok := s.ownFile(w, r, u); ok {
		writeJSON(w, http.StatusOK, fileRecord(f))
	}
}

// fileRecord is Open WebUI's FileModelResponse for f.
func fileRecord(f file) object {
	return object{
		"id": f.info.ID, "user_id": f.info.UserID, "hash": nil, "filename": f.info.Filename,
		"data":       object{"status": "completed"},
		"meta":       object{"name": f.info.Filename, "content_type": f.info.ContentType, "size": f.info.Size, "data": object{}},
		"created_at": f.created, "updated_at": f.created,
	}
}

func (s *Server) fileContent(w http.ResponseWriter, r *http.Request, _ string, u owui.User) {
	f, ok := s.ownFile(w, r, u)
	if !ok {
		return
	}
	if f.delivery.Status != 0 {
		writeJSON(w, f.delivery.Status, object{"detail": http.StatusText(f.delivery.Status)})
		return
	}
	ct := f.info.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape(f.info.Filename))
	send(w, r, f)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request, _ string, u owui.User) {
	id := r.PathValue("id")
	s.mu.Lock()
	c, ok := s.chats[id]
	var items []object
	for _, fid := range c.fileIDs {
		items = append(items, s.chatItem(fid))
	}
	s.mu.Unlock()
	if !ok || c.ownerID != u.ID {
		writeJSON(w, http.StatusNotFound, object{"detail": notFound})
		return
	}
	userID, botID := id+"-m1", id+"-m2"
	userMsg := object{
		"id": userID, "parentId": nil, "childrenIds": []string{botID}, "role": "user",
		"content": "Here are my files.", "files": items, "timestamp": c.created, "models": []string{"llama3"},
	}
	botMsg := object{
		"id": botID, "parentId": userID, "childrenIds": []string{}, "role": "assistant",
		"content": "Thanks.", "model": "llama3", "done": true, "timestamp": c.created,
	}
	writeJSON(w, http.StatusOK, object{
		"id": id, "user_id": c.ownerID, "title": "New Chat",
		"chat": object{
			"id": "", "title": "New Chat", "models": []string{"llama3"}, "params": object{},
			"history":  object{"messages": object{userID: userMsg, botID: botMsg}, "currentId": botID},
			"messages": []object{userMsg, botMsg},
			"tags":     []string{}, "timestamp": c.created * 1000, "files": []object{},
		},
		"updated_at": c.created, "created_at": c.created, "share_id": nil,
		"archived": false, "pinned": false, "meta": object{}, "folder_id": nil,
	})
}

// chatItem is the entry the Open WebUI front end stores in a message's
// "files" for an uploaded file. s.mu must be held.
func (s *Server) chatItem(id string) object {
	item := object{
		"type": "file", "id": id, "url": "/api/v1/files/" + id, "name": id,
		"collection_name": "file-" + id, "status": "uploaded", "error": "", "itemId": id + "-item",
	}
	if f, ok := s.files[id]; ok {
		item["file"] = fileRecord(f)
		item["name"] = f.info.Filename
		item["size"] = f.info.Size
	}
	return item
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
