package owuitest

import (
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
)

// Server is a running fake Open WebUI. Its methods are safe for concurrent
// use, also while requests are being served.
type Server struct {
	// URL is the base URL to give owui.New, e.g. "http://127.0.0.1:41234".
	URL string

	mu     sync.Mutex
	tokens map[string]owui.User // bearer token -> user
	groups []owui.Group
	files  map[string]file
	chats  map[string]chat
	down   bool
	delay  time.Duration
	// refuseUploads makes every upload answer 400, as Open WebUI does when its file table
	// does not take the entry.
	refuseUploads bool
	// delayChanged is closed (and replaced) by SetDelay: held answers go on at once.
	delayChanged chan struct{}
	// noMemberLists makes the group list omit user_ids, as recent Open WebUI versions do.
	noMemberLists bool
	calls         map[string]int
}

type file struct {
	info    owui.FileInfo
	content []byte
	// size > 0 with content nil: generated content of that many bytes (AddGeneratedFile).
	size     int64
	created  int64
	delivery Delivery
}

type chat struct {
	ownerID string
	fileIDs []string
	created int64
}

// New starts a fake Open WebUI on a random local port and stops it when the
// test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		tokens: map[string]owui.User{},
		files:  map[string]file{},
		chats:  map[string]chat{},
		calls:  map[string]int{},
	}
	srv := httptest.NewServer(s.routes())
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// AddUser makes token a valid bearer token for u. A user may have several tokens.
func (s *Server) AddUser(token string, u owui.User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = u
}

// AddGroup adds (or replaces, by id) a group; its members are g.UserIDs.
func (s *Server) AddGroup(g owui.Group) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g.UserIDs = append([]string(nil), g.UserIDs...)
	for i := range s.groups {
		if s.groups[i].ID == g.ID {
			s.groups[i] = g
			return
		}
	}
	s.groups = append(s.groups, g)
}

// AddFile stores an upload owned by ownerID (f.UserID is ignored). A zero
// f.Size becomes len(content); an empty f.ContentType stays empty.
func (s *Server) AddFile(ownerID string, f owui.FileInfo, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.UserID = ownerID
	if f.Size == 0 {
		f.Size = int64(len(content))
	}
	s.files[f.ID] = file{info: f, content: append([]byte(nil), content...), created: time.Now().Unix()}
}

// AddChat stores a conversation owned by ownerID whose user message has
// fileIDs attached (ids never added with AddFile are attached by id only).
func (s *Server) AddChat(chatID, ownerID string, fileIDs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats[chatID] = chat{ownerID: ownerID, fileIDs: append([]string(nil), fileIDs...), created: time.Now().Unix()}
}

// OmitMemberLists makes the group lists send member_count without user_ids, as
// recent Open WebUI versions do; the admin route POST /api/v1/groups/id/{id}/users still
// lists the members.
func (s *Server) OmitMemberLists(omit bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noMemberLists = omit
}

// RemoveUser deletes the account id as an Open WebUI administrator does: its tokens stop
// working and it leaves every group.
func (s *Server) RemoveUser(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for tok, u := range s.tokens {
		if u.ID == id {
			delete(s.tokens, tok)
		}
	}
	for i := range s.groups {
		s.groups[i].UserIDs = slices.DeleteFunc(s.groups[i].UserIDs, func(u string) bool { return u == id })
	}
}

// SetRefuseUploads makes every upload answer 400 {"detail": "Error uploading file"} while
// refuse is true: Open WebUI's answer when it cannot store the file's entry.
func (s *Server) SetRefuseUploads(refuse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseUploads = refuse
}

// SetDown makes every request answer 503 while down is true.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// SetDelay holds every answer for d (0 for none), or until the client gives up, or until the
// next SetDelay releases the answers held so far (a test holds them with a long delay and
// lets them go when it has seen what it waits for).
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
	if s.delayChanged != nil {
		close(s.delayChanged)
	}
	s.delayChanged = make(chan struct{})
}

// Calls returns how many requests reached the exact (unescaped) URL path,
// e.g. "/api/v1/auths/", whatever their answer.
func (s *Server) Calls(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[path]
}
