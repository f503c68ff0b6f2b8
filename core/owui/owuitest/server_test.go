package owuitest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

// get sends a raw request so the tests see exactly what the fake puts on the wire.
func get(t *testing.T, s *owuitest.Server, path, auth string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("answer is not a JSON object: %v: %s", err, body)
	}
	return m
}

func hasKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s lacks %q: %v", what, k, m)
		}
	}
}

func world(t *testing.T) *owuitest.Server {
	s := owuitest.New(t)
	s.AddUser("tok-a", owui.User{ID: "ua", Email: "a@x", Name: "A", Role: "user"})
	s.AddUser("tok-b", owui.User{ID: "ub", Role: "user"})
	s.AddFile("ua", owui.FileInfo{ID: "f1", UserID: "ignored", Filename: "a b.txt", ContentType: "text/plain"}, []byte("hi"))
	s.AddChat("c1", "ua", "f1")
	return s
}

func TestAccessRules(t *testing.T) {
	notFound := "We could not find what you're looking for :/"
	tests := []struct {
		name, path, auth string
		status           int
		detail           string
	}{
		{name: "no token", path: "/api/v1/auths/", status: 401, detail: "Not authenticated"},
		{name: "unknown token", path: "/api/v1/auths/", auth: "Bearer nope", status: 401, detail: "Not authenticated"},
		{name: "wrong scheme", path: "/api/v1/auths/", auth: "Basic tok-a", status: 401, detail: "Not authenticated"},
		{name: "scheme is case-insensitive", path: "/api/v1/auths/", auth: "bearer tok-a", status: 200},
		{name: "owner reads file", path: "/api/v1/files/f1", auth: "Bearer tok-a", status: 200},
		{name: "other user's file", path: "/api/v1/files/f1", auth: "Bearer tok-b", status: 404, detail: notFound},
		{name: "other user's content", path: "/api/v1/files/f1/content", auth: "Bearer tok-b", status: 404, detail: notFound},
		{name: "other user's chat", path: "/api/v1/chats/c1", auth: "Bearer tok-b", status: 404, detail: notFound},
		{name: "missing chat", path: "/api/v1/chats/c9", auth: "Bearer tok-a", status: 404, detail: notFound},
		{name: "unknown route", path: "/api/v1/nope", auth: "Bearer tok-a", status: 404, detail: "Not Found"},
	}
	s := world(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := get(t, s, tt.path, tt.auth)
			if status != tt.status {
				t.Fatalf("status = %d, want %d: %s", status, tt.status, body)
			}
			if tt.detail != "" && decode(t, body)["detail"] != tt.detail {
				t.Fatalf("body = %s, want detail %q", body, tt.detail)
			}
		})
	}
}

func TestWireShapes(t *testing.T) {
	s := world(t)
	_, _, body := get(t, s, "/api/v1/auths/", "Bearer tok-a")
	hasKeys(t, "auths", decode(t, body), "id", "email", "name", "role", "profile_image_url", "token", "token_type")

	_, _, body = get(t, s, "/api/v1/files/f1", "Bearer tok-a")
	f := decode(t, body)
	hasKeys(t, "file", f, "id", "user_id", "filename", "meta", "created_at", "updated_at")
	if f["user_id"] != "ua" {
		t.Errorf("file owner = %v, want ua (AddFile's owner wins)", f["user_id"])
	}
	hasKeys(t, "file meta", f["meta"].(map[string]any), "name", "content_type", "size")

	_, h, body := get(t, s, "/api/v1/files/f1/content", "Bearer tok-a")
	if string(body) != "hi" || h.Get("Content-Type") != "text/plain" ||
		h.Get("Content-Disposition") != "attachment; filename*=UTF-8''a%20b.txt" {
		t.Errorf("content = %q, headers %v", body, h)
	}

	_, _, body = get(t, s, "/api/v1/chats/c1", "Bearer tok-a")
	c := decode(t, body)
	hasKeys(t, "chat", c, "id", "user_id", "title", "chat", "created_at", "updated_at", "archived")
	inner := c["chat"].(map[string]any)
	hasKeys(t, "chat.chat", inner, "messages", "history", "files")
	first := inner["messages"].([]any)[0].(map[string]any)
	item := first["files"].([]any)[0].(map[string]any)
	hasKeys(t, "chat file entry", item, "type", "id", "name", "file", "url")
	if item["type"] != "file" || item["id"] != "f1" || item["name"] != "a b.txt" {
		t.Errorf("chat file entry = %v", item)
	}
	history := inner["history"].(map[string]any)["messages"].(map[string]any)
	if _, ok := history[first["id"].(string)]; !ok {
		t.Errorf("history.messages lacks message %v", first["id"])
	}
}

func TestGroupsVisibility(t *testing.T) {
	s := owuitest.New(t)
	s.AddUser("tok-a", owui.User{ID: "ua", Role: "user"})
	s.AddUser("tok-root", owui.User{ID: "ur", Role: "admin"})
	s.AddGroup(owui.Group{ID: "g1", Name: "One", UserIDs: []string{"ua"}})
	s.AddGroup(owui.Group{ID: "g2", Name: "Two"})
	s.AddGroup(owui.Group{ID: "g1", Name: "One again", UserIDs: []string{"ua", "ux"}}) // replaces g1
	s.AddGroup(owui.Group{ID: "g3", Name: "Three", UserIDs: []string{"ur"}})
	tests := []struct {
		path, token string
		want        []string
	}{
		{"/api/v1/groups/", "tok-a", []string{"g1"}},
		{"/api/v1/groups/", "tok-root", []string{"g1", "g2", "g3"}},
		{"/api/v1/users/groups", "tok-a", []string{"g1"}},
		{"/api/v1/users/groups", "tok-root", []string{"g3"}}, // an admin's own groups only
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.token, func(t *testing.T) {
			_, _, body := get(t, s, tt.path, "Bearer "+tt.token)
			var groups []map[string]any
			if err := json.Unmarshal(body, &groups); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, g := range groups {
				ids = append(ids, g["id"].(string))
				if g["user_ids"] == nil || g["member_count"] == nil {
					t.Errorf("group %v lacks user_ids or member_count", g)
				}
			}
			if !slices.Equal(ids, tt.want) {
				t.Fatalf("groups = %v, want %v", ids, tt.want)
			}
			if tt.want[0] == "g1" && groups[0]["name"] != "One again" {
				t.Errorf("g1 not replaced: %v", groups[0])
			}
		})
	}
}

func TestDownDelayAndCalls(t *testing.T) {
	s := world(t)
	s.SetDown(true)
	if status, _, _ := get(t, s, "/api/v1/auths/", "Bearer tok-a"); status != 503 {
		t.Fatalf("down: status = %d, want 503", status)
	}
	if status, _, _ := get(t, s, "/anything", ""); status != 503 {
		t.Fatalf("down: status = %d, want 503 for every path", status)
	}
	s.SetDown(false)
	s.SetDelay(150 * time.Millisecond)
	start := time.Now()
	if status, _, _ := get(t, s, "/api/v1/auths/", "Bearer tok-a"); status != 200 {
		t.Fatalf("delayed: status = %d, want 200", status)
	}
	if elapsed := time.Since(start); elapsed < 150*time.Millisecond {
		t.Fatalf("delayed answer came after %s, want >= 150ms", elapsed)
	}
	if n := s.Calls("/api/v1/auths/"); n != 2 {
		t.Fatalf("Calls(auths) = %d, want 2", n)
	}
	if n := s.Calls("/anything"); n != 1 {
		t.Fatalf("Calls(/anything) = %d, want 1", n)
	}
	if n := s.Calls("/api/v1/groups/"); n != 0 {
		t.Fatalf("Calls(groups) = %d, want 0", n)
	}
}
