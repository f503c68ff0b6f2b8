package owui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// User is an Open WebUI account as /api/v1/auths/ describes it. Role is
// "admin", "user" or "pending" (not yet approved); the caller decides what a
// pending user may do. All fields come from Open WebUI and are untrusted text.
type User struct{ ID, Email, Name, Role string }

// Group is an Open WebUI user group. UserIDs is nil when the server omits
// the member list (recent Open WebUI versions only send member_count).
type Group struct {
	ID, Name string
	UserIDs  []string
}

// FileInfo describes an uploaded Open WebUI file. Filename is the name the
// user uploaded and is untrusted: it may contain "/", ".." or anything else.
// Fields Open WebUI did not send are empty.
type FileInfo struct {
	ID, UserID, Filename, ContentType string
	Size                              int64
}

// Me verifies token with GET {base}/api/v1/auths/ and returns its user.
// A refused token is ErrUnauthorized; an answer without an id is ErrUnavailable.
func (c *Client) Me(ctx context.Context, token string) (User, error) {
	const path = "/api/v1/auths/"
	var a struct {
		ID    string `json:"id"`
		Email string `json:"email"`
		Name  string `json:"name"`
		Role  string `json:"role"`
	}
	if err := c.getJSON(ctx, token, path, false, maxAuthJSON, &a); err != nil {
		return User{}, err
	}
	if a.ID == "" {
		return User{}, fmt.Errorf("%w: GET %s: answer has no user id", ErrUnavailable, path)
	}
	return User{ID: a.ID, Email: a.Email, Name: a.Name, Role: a.Role}, nil
}

// Groups lists, with GET {base}/api/v1/users/groups, the groups token's user is a member
// of. Not GET /api/v1/groups/: that lists every group to an administrator, and recent
// versions send no member lists to tell the administrator's own apart.
func (c *Client) Groups(ctx context.Context, token string) ([]Group, error) {
	const path = "/api/v1/users/groups"
	var a []struct {
		ID      string   `json:"id"`
		Name    string   `json:"name"`
		UserIDs []string `json:"user_ids"`
	}
	if err := c.getJSON(ctx, token, path, false, maxBigJSON, &a); err != nil {
		return nil, err
	}
	groups := make([]Group, 0, len(a))
	for _, g := range a {
		if g.ID == "" {
			return nil, fmt.Errorf("%w: GET %s: group without id", ErrUnavailable, path)
		}
		groups = append(groups, Group{ID: g.ID, Name: g.Name, UserIDs: g.UserIDs})
	}
	return groups, nil
}

// GroupMembers lists the members of group id with POST
// {base}/api/v1/groups/id/{id}/users, an administrator's call (token must be an admin's:
// openwebui.admin_api_key). A group Open WebUI does not know has no members.
func (c *Client) GroupMembers(ctx context.Context, token, id string) ([]User, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if err := checkToken(token); err != nil {
		return nil, err
	}
	path := "/api/v1/groups/id/" + url.PathEscape(id) + "/users"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: POST %s: invalid Open WebUI URL", ErrUnavailable, path)
	}
	var a []struct {
		ID    string `json:"id"`
		Email string `json:"email"`
		Name  string `json:"name"`
		Role  string `json:"role"`
	}
	err = c.send(req, token, path, &a, true)
	if errors.Is(err, ErrNotFound) {
		return []User{}, nil
	}
	if err != nil {
		return nil, err
	}
	users := make([]User, 0, len(a))
	for _, u := range a {
		if u.ID == "" {
			return nil, fmt.Errorf("%w: POST %s: member without id", ErrUnavailable, path)
		}
		users = append(users, User{ID: u.ID, Email: u.Email, Name: u.Name, Role: u.Role})
	}
	return users, nil
}

// fileMeta is the "meta" object of an Open WebUI file record.
type fileMeta struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

// fileRecord is Open WebUI's FileModelResponse, reduced to what we use.
type fileRecord struct {
	ID       string   `json:"id"`
	UserID   string   `json:"user_id"`
	Filename string   `json:"filename"`
	Meta     fileMeta `json:"meta"`
}

func (f fileRecord) info() FileInfo {
	name := f.Filename
	if name == "" {
		name = f.Meta.Name
	}
	return FileInfo{ID: f.ID, UserID: f.UserID, Filename: name, ContentType: f.Meta.ContentType, Size: f.Meta.Size}
}

// File reads a file's metadata with GET {base}/api/v1/files/{id}. A file
// that is missing or not readable with token is ErrNotFound.
func (c *Client) File(ctx context.Context, token, id string) (FileInfo, error) {
	if err := checkID(id); err != nil {
		return FileInfo{}, err
	}
	path := "/api/v1/files/" + url.PathEscape(id)
	var f fileRecord
	if err := c.getJSON(ctx, token, path, true, maxBigJSON, &f); err != nil {
		return FileInfo{}, err
	}
	if f.ID != id {
		return FileInfo{}, fmt.Errorf("%w: GET %s: answer is for another file", ErrUnavailable, path)
	}
	return f.info(), nil
}

// FileContent streams a file's bytes from GET {base}/api/v1/files/{id}/content.
// The client timeout bounds the wait for the response headers only; the body
// then streams for as long as ctx allows, so callers should give ctx a
// deadline and must close the reader. Size limits are the caller's job.
func (c *Client) FileContent(ctx context.Context, token, id string) (io.ReadCloser, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	path := "/api/v1/files/" + url.PathEscape(id) + "/content"
	ctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(c.timeout, cancel)
	resp, err := c.get(ctx, token, path, true)
	fired := !timer.Stop()
	switch {
	case fired:
		if err == nil {
			resp.Body.Close()
		}
		cancel()
		return nil, fmt.Errorf("%w: GET %s: no answer within %s", ErrUnavailable, path, c.timeout)
	case err != nil:
		cancel()
		return nil, err
	}
	return &streamBody{ReadCloser: resp.Body, cancel: cancel}, nil
}

// streamBody releases the request context when the caller closes the body.
type streamBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *streamBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// chatFile is one entry of a message's (or the chat's) "files" list, as the
// Open WebUI front end writes it: {"type":"file","id","name","size",
// "file":{...FileModel...},"url",...}.
type chatFile struct {
	Type string      `json:"type"`
	ID   string      `json:"id"`
	Name string      `json:"name"`
	File *fileRecord `json:"file"`
}

type chatMessage struct {
	Files []json.RawMessage `json:"files"`
}

// ChatFiles lists the distinct files attached to a conversation, read with
// GET {base}/api/v1/chats/{chatID}: entries of type "file" in chat.messages,
// chat.history.messages and chat.files, in that order, first name wins.
// Entries that are malformed or of another type (collections, images) are
// skipped. A chat that is missing or someone else's is ErrNotFound.
func (c *Client) ChatFiles(ctx context.Context, token, chatID string) ([]FileInfo, error) {
	if err := checkID(chatID); err != nil {
		return nil, err
	}
	path := "/api/v1/chats/" + url.PathEscape(chatID)
	var a struct {
		ID   string `json:"id"`
		Chat struct {
			Messages []chatMessage `json:"messages"`
			History  struct {
				Messages map[string]chatMessage `json:"messages"`
			} `json:"history"`
			Files []json.RawMessage `json:"files"`
		} `json:"chat"`
	}
	if err := c.getJSON(ctx, token, path, true, maxBigJSON, &a); err != nil {
		return nil, err
	}
	if a.ID != chatID {
		return nil, fmt.Errorf("%w: GET %s: answer is for another chat", ErrUnavailable, path)
	}
	lists := make([][]json.RawMessage, 0, len(a.Chat.Messages)+len(a.Chat.History.Messages)+1)
	for _, m := range a.Chat.Messages {
		lists = append(lists, m.Files)
	}
	for _, k := range slices.Sorted(maps.Keys(a.Chat.History.Messages)) {
		lists = append(lists, a.Chat.History.Messages[k].Files)
	}
	lists = append(lists, a.Chat.Files)

	files := []FileInfo{}
	seen := map[string]bool{}
	for _, list := range lists {
		for _, raw := range list {
			f, ok := parseChatFile(raw)
			if ok && !seen[f.ID] {
				seen[f.ID] = true
				files = append(files, f)
			}
		}
	}
	return files, nil
}

// parseChatFile turns one "files" entry into a FileInfo, preferring the
// entry's own id and name and completing them from the embedded file record.
func parseChatFile(raw json.RawMessage) (FileInfo, bool) {
	var e chatFile
	if json.Unmarshal(raw, &e) != nil || e.Type != "file" {
		return FileInfo{}, false
	}
	var f FileInfo
	if e.File != nil {
		f = e.File.info()
	}
	if e.ID != "" {
		f.ID = e.ID
	}
	if e.Name != "" {
		f.Filename = e.Name
	}
	if f.ID == "" {
		return FileInfo{}, false
	}
	return f, true
}
