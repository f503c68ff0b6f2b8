package owui_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

const (
	aliceToken = "alice-token"
	bobToken   = "bob-token"
	rootToken  = "root-token"
)

var (
	alice = owui.User{ID: "u-alice", Email: "alice@example.com", Name: "Alice", Role: "user"}
	bob   = owui.User{ID: "u-bob", Email: "bob@example.com", Name: "Bob", Role: "user"}
	root  = owui.User{ID: "u-root", Email: "root@example.com", Name: "Root", Role: "admin"}

	report = owui.FileInfo{ID: "f-report", Filename: "report.pdf", ContentType: "application/pdf"}
	notes  = owui.FileInfo{ID: "f-notes", Filename: "notes.txt", ContentType: "text/plain"}
	bobs   = owui.FileInfo{ID: "f-bob", Filename: "secret.txt", ContentType: "text/plain"}
)

// world starts a fake Open WebUI with three users, two groups, three files
// and three chats.
func world(t *testing.T) *owuitest.Server {
	t.Helper()
	s := owuitest.New(t)
	s.AddUser(aliceToken, alice)
	s.AddUser(bobToken, bob)
	s.AddUser(rootToken, root)
	s.AddGroup(owui.Group{ID: "g-team", Name: "Team", UserIDs: []string{alice.ID, bob.ID}})
	s.AddGroup(owui.Group{ID: "g-ops", Name: "Ops", UserIDs: []string{bob.ID}})
	s.AddFile(alice.ID, report, []byte("%PDF-1.7 report"))
	s.AddFile(alice.ID, notes, []byte("hello\n"))
	s.AddFile(bob.ID, bobs, []byte("bob only"))
	s.AddChat("c-alice", alice.ID, report.ID, notes.ID, report.ID, "f-ghost")
	s.AddChat("c-empty", alice.ID)
	s.AddChat("c-bob", bob.ID, bobs.ID)
	return s
}

// tripwire is an Open WebUI that fails the test if any request reaches it.
func tripwire(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request to %s", r.URL)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// checkErr fails unless err wraps want (nil for success) and leaks no token.
func checkErr(t *testing.T, err, want error, token string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
	if token != "" && strings.Contains(err.Error(), token) {
		t.Fatalf("error %q contains the token", err)
	}
}

func TestMe(t *testing.T) {
	tests := []struct {
		name    string
		token   string
		down    bool
		delay   time.Duration
		want    owui.User
		wantErr error
	}{
		{name: "valid user", token: aliceToken, want: alice},
		{name: "admin", token: rootToken, want: root},
		{name: "unknown token", token: "nobody-token", wantErr: owui.ErrUnauthorized},
		{name: "server down", token: aliceToken, down: true, wantErr: owui.ErrUnavailable},
		{name: "slower than timeout", token: aliceToken, delay: 3 * time.Second, wantErr: owui.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := world(t)
			s.SetDown(tt.down)
			s.SetDelay(tt.delay)
			const timeout = 200 * time.Millisecond
			start := time.Now()
			got, err := owui.New(s.URL, timeout).Me(context.Background(), tt.token)
			if elapsed := time.Since(start); elapsed > timeout+time.Second {
				t.Errorf("Me took %s with a %s timeout", elapsed, timeout)
			}
			checkErr(t, err, tt.wantErr, tt.token)
			if got != tt.want {
				t.Errorf("Me = %+v, want %+v", got, tt.want)
			}
			if n := s.Calls("/api/v1/auths/"); n != 1 {
				t.Errorf("upstream calls = %d, want 1", n)
			}
		})
	}
}

func TestMeTimeoutReportsDeadline(t *testing.T) {
	s := world(t)
	s.SetDelay(3 * time.Second)
	_, err := owui.New(s.URL, 100*time.Millisecond).Me(context.Background(), aliceToken)
	if !errors.Is(err, owui.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want ErrUnavailable wrapping DeadlineExceeded", err)
	}
}

func TestMeUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close() // nothing listens there any more
	_, err := owui.New(base, time.Second).Me(context.Background(), aliceToken)
	checkErr(t, err, owui.ErrUnavailable, aliceToken)
}

func TestRejectsHostileTokenWithoutRequest(t *testing.T) {
	tokens := map[string]string{
		"empty":            "",
		"header injection": "tok\r\nX-Injected: 1",
		"space":            "tok en",
		"NUL":              "tok\x00en",
		"non-ASCII":        "tokén",
		"oversized":        strings.Repeat("a", 16<<10+1),
	}
	c := owui.New(tripwire(t), time.Second)
	for name, token := range tokens {
		t.Run(name, func(t *testing.T) {
			_, err := c.Me(context.Background(), token)
			checkErr(t, err, owui.ErrUnauthorized, token)
			_, err = c.Groups(context.Background(), token)
			checkErr(t, err, owui.ErrUnauthorized, token)
		})
	}
}

func TestGroups(t *testing.T) {
	tests := []struct {
		name    string
		token   string
		want    []owui.Group
		wantErr error
	}{
		{name: "member of one", token: aliceToken, want: []owui.Group{
			{ID: "g-team", Name: "Team", UserIDs: []string{alice.ID, bob.ID}},
		}},
		{name: "member of two", token: bobToken, want: []owui.Group{
			{ID: "g-team", Name: "Team", UserIDs: []string{alice.ID, bob.ID}},
			{ID: "g-ops", Name: "Ops", UserIDs: []string{bob.ID}},
		}},
		{name: "an admin is a member of none", token: rootToken, want: []owui.Group{}},
		{name: "unknown token", token: "nobody-token", wantErr: owui.ErrUnauthorized},
	}
	s := world(t)
	c := owui.New(s.URL, time.Second)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Groups(context.Background(), tt.token)
			checkErr(t, err, tt.wantErr, tt.token)
			if !slices.EqualFunc(got, tt.want, func(a, b owui.Group) bool {
				return a.ID == b.ID && a.Name == b.Name && slices.Equal(a.UserIDs, b.UserIDs)
			}) {
				t.Errorf("Groups = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFile(t *testing.T) {
	withOwner := func(f owui.FileInfo, owner string, size int64) owui.FileInfo {
		f.UserID, f.Size = owner, size
		return f
	}
	tests := []struct {
		name    string
		token   string
		id      string
		want    owui.FileInfo
		wantErr error
	}{
		{name: "own file", token: aliceToken, id: report.ID, want: withOwner(report, alice.ID, 15)},
		{name: "other own file", token: bobToken, id: bobs.ID, want: withOwner(bobs, bob.ID, 8)},
		{name: "other user's file", token: bobToken, id: report.ID, wantErr: owui.ErrNotFound},
		{name: "admin reads any file (as Open WebUI allows)", token: rootToken, id: report.ID, want: withOwner(report, alice.ID, 15)},
		{name: "missing file", token: aliceToken, id: "f-missing", wantErr: owui.ErrNotFound},
		{name: "unknown token", token: "nobody-token", id: report.ID, wantErr: owui.ErrUnauthorized},
	}
	s := world(t)
	c := owui.New(s.URL, time.Second)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.File(context.Background(), tt.token, tt.id)
			checkErr(t, err, tt.wantErr, tt.token)
			if got != tt.want {
				t.Errorf("File = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestChatFiles(t *testing.T) {
	tests := []struct {
		name    string
		token   string
		chatID  string
		want    []owui.FileInfo
		wantErr error
	}{
		{name: "distinct files in order", token: aliceToken, chatID: "c-alice", want: []owui.FileInfo{
			{ID: report.ID, UserID: alice.ID, Filename: "report.pdf", ContentType: "application/pdf", Size: 15},
			{ID: notes.ID, UserID: alice.ID, Filename: "notes.txt", ContentType: "text/plain", Size: 6},
			{ID: "f-ghost", Filename: "f-ghost"},
		}},
		{name: "chat without files", token: aliceToken, chatID: "c-empty", want: []owui.FileInfo{}},
		{name: "other user's chat", token: aliceToken, chatID: "c-bob", wantErr: owui.ErrNotFound},
		{name: "missing chat", token: aliceToken, chatID: "c-missing", wantErr: owui.ErrNotFound},
		{name: "unknown token", token: "nobody-token", chatID: "c-alice", wantErr: owui.ErrUnauthorized},
	}
	s := world(t)
	c := owui.New(s.URL, time.Second)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.ChatFiles(context.Background(), tt.token, tt.chatID)
			checkErr(t, err, tt.wantErr, tt.token)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ChatFiles = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRejectsPathEscapingIDsWithoutRequest(t *testing.T) {
	ids := map[string]string{
		"parent":            "../x",
		"deep parent":       "../../auths/",
		"dot dot":           "..",
		"dot":               ".",
		"slash":             "a/b",
		"leading slash":     "/etc",
		"backslash":         `a\b`,
		"encoded dots":      "%2e%2e",
		"encoded slash":     "a%2Fb",
		"query":             "x?y=1",
		"fragment":          "x#y",
		"space":             "a b",
		"NUL":               "a\x00b",
		"newline":           "a\nb",
		"non-ASCII":         "fïle",
		"invalid UTF-8":     "a\xffb",
		"empty":             "",
		"too long":          strings.Repeat("a", 129),
		"dots inside":       "a..b",
		"trailing dot dots": "x/..",
	}
	c := owui.New(tripwire(t), time.Second)
	ctx := context.Background()
	for name, id := range ids {
		t.Run(name, func(t *testing.T) {
			_, err := c.File(ctx, aliceToken, id)
			checkErr(t, err, owui.ErrInvalidID, aliceToken)
			_, err = c.FileContent(ctx, aliceToken, id)
			checkErr(t, err, owui.ErrInvalidID, aliceToken)
			_, err = c.ChatFiles(ctx, aliceToken, id)
			checkErr(t, err, owui.ErrInvalidID, aliceToken)
		})
	}
}

func TestAcceptsRealIDShapes(t *testing.T) {
	s := owuitest.New(t)
	s.AddUser(aliceToken, alice)
	c := owui.New(s.URL, time.Second)
	for _, id := range []string{"3f2504e0-4f89-41d3-9a0c-0305e82c3301", "local:abc_DEF~1", "a.b"} {
		t.Run(id, func(t *testing.T) {
			s.AddFile(alice.ID, owui.FileInfo{ID: id, Filename: "x"}, []byte("x"))
			if _, err := c.File(context.Background(), aliceToken, id); err != nil {
				t.Fatalf("File(%q): %v", id, err)
			}
		})
	}
}

// TestGroupMembers: the admin API lists a group's members with their names; a user's token
// is refused, an unknown group has no members, and an id that is not one is refused
// before any request (it would be a path on the admin's token).
func TestGroupMembers(t *testing.T) {
	s := world(t)
	s.OmitMemberLists(true)
	c := owui.New(s.URL, time.Second)
	ctx := context.Background()
	us, err := c.GroupMembers(ctx, rootToken, "g-team")
	if err != nil || len(us) != 2 || us[0] != alice || us[1] != bob {
		t.Fatalf("members of g-team: %v %v", us, err)
	}
	if us, err := c.GroupMembers(ctx, rootToken, "g-none"); err != nil || len(us) != 0 {
		t.Fatalf("unknown group: %v %v", us, err)
	}
	if _, err := c.GroupMembers(ctx, aliceToken, "g-team"); !errors.Is(err, owui.ErrUnauthorized) {
		t.Fatalf("a user's token: %v", err)
	}
	for _, id := range []string{"", "..", "../auths", "a/b", "g team"} {
		if _, err := c.GroupMembers(ctx, rootToken, id); !errors.Is(err, owui.ErrInvalidID) {
			t.Fatalf("id %q: %v", id, err)
		}
	}
	s.RemoveUser(alice.ID)
	if us, _ := c.GroupMembers(ctx, rootToken, "g-team"); len(us) != 1 || us[0].ID != bob.ID {
		t.Fatalf("after alice was deleted: %v", us)
	}
	if _, err := c.Me(ctx, aliceToken); !errors.Is(err, owui.ErrUnauthorized) {
		t.Fatalf("a deleted user's token: %v", err)
	}
}
