package owui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
)

// answer starts an Open WebUI stand-in that sends one fixed answer, for the
// real server's quirks and failures the fake does not reproduce.
func answer(t *testing.T, status int, header http.Header, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

const token = "sk-0123456789abcdef"

func TestStatusMapping(t *testing.T) {
	notFound := `{"detail":"We could not find what you're looking for :/"}`
	jsonType := http.Header{"Content-Type": {"application/json"}}
	tests := []struct {
		name   string
		status int
		body   string
		call   func(*owui.Client) error
		want   error
	}{
		// Open WebUI answers 401 + NOT_FOUND for a missing or foreign chat.
		{name: "chat 401 not found", status: 401, body: notFound, call: chatCall, want: owui.ErrNotFound},
		{name: "file 400 not found", status: 400, body: notFound, call: fileCall, want: owui.ErrNotFound},
		{name: "file 403 not found", status: 403, body: notFound, call: contentCall, want: owui.ErrNotFound},
		{name: "chat 401 expired token", status: 401, body: `{"detail":"Your session has expired or the token is invalid. Please sign in again."}`, call: chatCall, want: owui.ErrUnauthorized},
		{name: "file 403 not authenticated", status: 403, body: `{"detail":"Not authenticated"}`, call: fileCall, want: owui.ErrUnauthorized},
		{name: "me 401 with not found detail", status: 401, body: notFound, call: meCall, want: owui.ErrUnauthorized},
		{name: "me 404 means not Open WebUI", status: 404, body: `{"detail":"Not Found"}`, call: meCall, want: owui.ErrUnavailable},
		{name: "groups 404 means not Open WebUI", status: 404, body: `{"detail":"Not Found"}`, call: groupsCall, want: owui.ErrUnavailable},
		{name: "me 500", status: 500, body: "Internal Server Error", call: meCall, want: owui.ErrUnavailable},
		{name: "file 502 from proxy", status: 502, body: "<html>Bad Gateway</html>", call: fileCall, want: owui.ErrUnavailable},
		{name: "chat 429", status: 429, body: `{"detail":"slow down"}`, call: chatCall, want: owui.ErrUnavailable},
		{name: "me HTML page with 200", status: 200, body: "<!doctype html><title>Open WebUI</title>", call: meCall, want: owui.ErrUnavailable},
		{name: "me without id", status: 200, body: `{"email":"a@b","role":"user"}`, call: meCall, want: owui.ErrUnavailable},
		{name: "me oversized", status: 200, body: `{"id":"u","name":"` + strings.Repeat("x", 1<<20) + `"}`, call: meCall, want: owui.ErrUnavailable},
		{name: "me valid JSON padded past the cap", status: 200, body: `{"id":"u","role":"user"}` + strings.Repeat(" ", 1<<20), call: meCall, want: owui.ErrUnavailable},
		{name: "groups not a list", status: 200, body: `{"id":"g"}`, call: groupsCall, want: owui.ErrUnavailable},
		{name: "groups entry without id", status: 200, body: `[{"name":"x"}]`, call: groupsCall, want: owui.ErrUnavailable},
		{name: "file answer for another id", status: 200, body: `{"id":"f-other","user_id":"u","filename":"x","meta":{}}`, call: fileCall, want: owui.ErrUnavailable},
		{name: "chat answer for another id", status: 200, body: `{"id":"c-other","chat":{}}`, call: chatCall, want: owui.ErrUnavailable},
		{name: "chat truncated", status: 200, body: `{"id":"c1","chat":{"messages":[`, call: chatCall, want: owui.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := owui.New(answer(t, tt.status, jsonType, tt.body), time.Second)
			checkErr(t, tt.call(c), tt.want, token)
		})
	}
}

func meCall(c *owui.Client) error {
	_, err := c.Me(context.Background(), token)
	return err
}

func groupsCall(c *owui.Client) error {
	_, err := c.Groups(context.Background(), token)
	return err
}

func fileCall(c *owui.Client) error {
	_, err := c.File(context.Background(), token, "f1")
	return err
}

func contentCall(c *owui.Client) error {
	rc, err := c.FileContent(context.Background(), token, "f1")
	if err == nil {
		rc.Close()
	}
	return err
}

func chatCall(c *owui.Client) error {
	_, err := c.ChatFiles(context.Background(), token, "c1")
	return err
}

// A redirect could carry the user's token elsewhere; it must not be followed.
func TestDoesNotFollowRedirect(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		t.Errorf("redirect followed to %s (Authorization %q)", r.URL, r.Header.Get("Authorization"))
	}))
	t.Cleanup(target.Close)
	for _, status := range []int{301, 302, 307, 308} {
		base := answer(t, status, http.Header{"Location": {target.URL + "/api/v1/auths/"}}, "")
		_, err := owui.New(base, time.Second).Me(context.Background(), token)
		checkErr(t, err, owui.ErrUnavailable, token)
	}
}

func TestSendsBearerToken(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		_, _ = w.Write([]byte(`{"id":"u1","role":"user"}`))
	}))
	t.Cleanup(srv.Close)
	// A trailing slash on the base URL must not double the slash.
	if _, err := owui.New(srv.URL+"/", time.Second).Me(context.Background(), token); err != nil {
		t.Fatal(err)
	}
	if got != "Bearer "+token {
		t.Fatalf("Authorization = %q", got)
	}
}

func TestInvalidBaseURLHidesIt(t *testing.T) {
	base := "http://user:hunter2@exa mple.com"
	_, err := owui.New(base, time.Second).Me(context.Background(), token)
	checkErr(t, err, owui.ErrUnavailable, token)
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error %q leaks the base URL credentials", err)
	}
}

// Recent Open WebUI versions send member_count instead of user_ids.
func TestGroupsWithoutMemberList(t *testing.T) {
	body := `[{"id":"g1","user_id":"admin","name":"Team","description":"","permissions":{},"data":null,"meta":null,"member_count":3,"created_at":1,"updated_at":1},
	          {"id":"g2","name":"Empty","user_ids":[]}]`
	got, err := owui.New(answer(t, 200, nil, body), time.Second).Groups(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "g1" || got[0].Name != "Team" || got[0].UserIDs != nil {
		t.Fatalf("Groups = %#v, want g1 with nil UserIDs", got)
	}
	if got[1].UserIDs == nil || len(got[1].UserIDs) != 0 {
		t.Fatalf("g2 UserIDs = %#v, want empty non-nil", got[1].UserIDs)
	}
}

// A chat as the real front end stores it: entries of several types, the id
// sometimes only inside "file", files only in history or in chat.files, and
// entries of unexpected shape that must be skipped, not fail the chat.
func TestChatFilesRealShapes(t *testing.T) {
	body := `{"id":"c1","user_id":"u1","title":"t","chat":{
	  "messages":[
	    {"id":"m1","role":"user","files":[
	      {"type":"file","id":"f1","name":"a.txt","size":3,"url":"/api/v1/files/f1","status":"uploaded",
	       "file":{"id":"f1","user_id":"u1","filename":"a-stored.txt","meta":{"name":"a.txt","content_type":"text/plain","size":3},"data":{"content":"abc"}}},
	      {"type":"collection","id":"kb1","name":"Knowledge"},
	      {"type":"image","url":"data:image/png;base64,AAAA"},
	      {"type":"file","file":{"id":"f2","user_id":"u1","filename":"b.csv","meta":{"content_type":"text/csv","size":"huge"}}},
	      {"type":"file","file":{"id":"f3","user_id":"u1","filename":"c.md","meta":{"content_type":"text/markdown","size":7}}},
	      "not an object",
	      {"type":"file","name":"no-id.txt"}
	    ]},
	    {"id":"m2","role":"assistant","files":null}
	  ],
	  "history":{"currentId":"m3","messages":{
	    "m1":{"files":[{"type":"file","id":"f1","name":"renamed.txt"}]},
	    "m3":{"files":[{"type":"file","id":"f4","name":"d.pdf"}]}
	  }},
	  "files":[{"type":"file","id":"f5","name":"e.zip"},{"type":"file","id":"f4","name":"dup.pdf"}]
	}}`
	got, err := owui.New(answer(t, 200, nil, body), time.Second).ChatFiles(context.Background(), token, "c1")
	if err != nil {
		t.Fatal(err)
	}
	want := []owui.FileInfo{
		{ID: "f1", UserID: "u1", Filename: "a.txt", ContentType: "text/plain", Size: 3},
		{ID: "f3", UserID: "u1", Filename: "c.md", ContentType: "text/markdown", Size: 7},
		{ID: "f4", Filename: "d.pdf"},
		{ID: "f5", Filename: "e.zip"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ChatFiles =\n%+v\nwant\n%+v", got, want)
	}
}
