package handlers_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

// importWorld is a session-mode server in front of a fake Open WebUI where alice has a
// chat "chat-1" with two attachments and bob has one file of his own.
func importWorld(t *testing.T, vars map[string]string) (*env, *owuitest.Server) {
	t.Helper()
	fake := owuitest.New(t)
	fake.AddUser("tok-alice", owui.User{ID: "alice-1", Email: "a@x", Name: "Alice", Role: "user"})
	fake.AddUser("tok-bob", owui.User{ID: "bob-2", Email: "b@x", Name: "Bob", Role: "user"})
	fake.AddFile("alice-1", owui.FileInfo{ID: "f-report", Filename: "Report.pdf", ContentType: "application/pdf"}, []byte("%PDF-1.7 report"))
	fake.AddFile("alice-1", owui.FileInfo{ID: "f-notes", Filename: "notes.txt", ContentType: "text/plain"}, []byte("hello\n"))
	fake.AddFile("bob-2", owui.FileInfo{ID: "f-bob", Filename: "bob.txt"}, []byte("bob only"))
	fake.AddChat("chat-1", "alice-1", "f-report", "f-notes")
	all := map[string]string{"FILESHED_AUTH_MODE": "session", "FILESHED_OPENWEBUI_URL": fake.URL,
		"FILESHED_OPENWEBUI_TIMEOUT_SECONDS": "2"}
	for k, v := range vars {
		all[k] = v
	}
	return start(t, all), fake
}

// alice is the request headers of alice in chat.
func alice(chat string) map[string]string {
	return map[string]string{"Authorization": "Bearer tok-alice", "X-OpenWebUI-Chat-Id": chat}
}

const aliceUploads = "users/alice-1/Uploads/chat-1"

// usedBy is the accounted usage of the caller behind headers h.
func (e *env) usedBy(t *testing.T, h map[string]string) int64 {
	t.Helper()
	r := e.post("shed_stats", nil, h)
	wantOK(t, r)
	return int64(r.Data["total"].(map[string]any)["used_bytes"].(float64))
}

// onDisk lists the regular files under the user's Uploads folder (relative), temporary
// files included.
func onDisk(t *testing.T, e *env, rel string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(e.base, rel)
	_ = filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			r, _ := filepath.Rel(root, p)
			out = append(out, r)
		}
		return nil
	})
	return out
}

func TestImportByFileID(t *testing.T) {
	t.Parallel()
	e, _ := importWorld(t, nil)
	r := e.post("shed_import", map[string]any{"file_id": "f-report"}, alice("chat-1"))
	wantOK(t, r)
	item := r.Data["imported"].([]any)[0].(map[string]any)
	if item["path"] != "Report.pdf" || item["size"] != float64(15) || r.Data["count"] != float64(1) ||
		!strings.Contains(r.Message, "Imported 1 file(s) to Uploads") {
		t.Fatalf("answer: %s", r.raw)
	}
	if got := readFile(t, e, aliceUploads+"/Report.pdf"); got != "%PDF-1.7 report" {
		t.Fatalf("content %q", got)
	}
	fi, _ := os.Stat(filepath.Join(e.base, aliceUploads, "Report.pdf"))
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	// A second import of the same name never overwrites: it is deduplicated.
	r = e.post("shed_import", map[string]any{"file_id": "f-report"}, alice("chat-1"))
	wantOK(t, r)
	if p := r.Data["imported"].([]any)[0].(map[string]any)["path"]; p != "Report (2).pdf" {
		t.Fatalf("dedupe: %v", p)
	}
	if u := e.usedBy(t, alice("chat-1")); u != 30 {
		t.Fatalf("usage %d, want 30", u)
	}
	// The imported file is readable in the uploads zone of the same chat only.
	wantOK(t, e.post("shed_read", map[string]any{"zone": "uploads", "path": "Report (2).pdf"}, alice("chat-1")))
	wantError(t, e.post("shed_read", map[string]any{"zone": "uploads", "path": "Report.pdf"}, alice("chat-2")), "FILE_NOT_FOUND")
	// dest_subdir is confined like any path.
	r = e.post("shed_import", map[string]any{"file_id": "f-notes", "dest_subdir": "in/box"}, alice("chat-1"))
	wantOK(t, r)
	if readFile(t, e, aliceUploads+"/in/box/notes.txt") != "hello\n" {
		t.Fatal("dest_subdir not honoured")
	}
	wantError(t, e.post("shed_import", map[string]any{"file_id": "f-notes", "dest_subdir": "../../x"}, alice("chat-1")), "PATH_ESCAPE")
	wantError(t, e.post("shed_import", map[string]any{"file_id": "f-notes", "dest_subdir": "uploads/x"}, alice("chat-1")), "PATH_STARTS_WITH_ZONE")
}

func TestImportAllAndFilename(t *testing.T) {
	t.Parallel()
	e, fake := importWorld(t, nil)
	fake.AddChat("chat-1", "alice-1", "f-report", "f-notes", "f-ghost")
	r := e.post("shed_import", map[string]any{"import_all": true}, alice("chat-1"))
	wantOK(t, r)
	errs := r.Data["errors"].([]any)
	if r.Data["count"] != float64(2) || len(errs) != 1 || errs[0].(map[string]any)["error"] != "FILE_NOT_FOUND" ||
		errs[0].(map[string]any)["file_id"] != "f-ghost" {
		t.Fatalf("per-file results: %s", r.raw)
	}
	if !exists(e, aliceUploads+"/Report.pdf") || !exists(e, aliceUploads+"/notes.txt") {
		t.Fatal("files not imported")
	}
	r = e.post("shed_import", map[string]any{"filename": "NOTES.TXT"}, alice("chat-1"))
	wantOK(t, r)
	if r.Data["count"] != float64(1) || r.Data["imported"].([]any)[0].(map[string]any)["path"] != "notes (2).txt" {
		t.Fatalf("filename: %s", r.raw)
	}
	// A name typed in NFD finds the NFC name Open WebUI stored.
	fake.AddFile("alice-1", owui.FileInfo{ID: "f-cv", Filename: "r\u00e9sum\u00e9.txt"}, []byte("cv"))
	fake.AddChat("chat-1", "alice-1", "f-report", "f-notes", "f-ghost", "f-cv")
	r = e.post("shed_import", map[string]any{"filename": "re\u0301sume\u0301.txt"}, alice("chat-1"))
	wantOK(t, r)
	if readFile(t, e, aliceUploads+"/r\u00e9sum\u00e9.txt") != "cv" {
		t.Fatalf("NFD name: %s", r.raw)
	}
	r = e.post("shed_import", map[string]any{"filename": "nope.txt"}, alice("chat-1"))
	wantError(t, r, "FILE_NOT_FOUND")
	if len(r.Details["attached"].([]any)) != 4 {
		t.Fatalf("the attached names should be listed: %s", r.raw)
	}
	// Every file failing: the first error, with the per-file list.
	fake.AddChat("chat-ghosts", "alice-1", "f-ghost", "f-bob")
	r = e.post("shed_import", map[string]any{"import_all": true}, alice("chat-ghosts"))
	wantError(t, r, "FILE_NOT_FOUND")
	if len(r.Details["errors"].([]any)) != 2 {
		t.Fatalf("errors: %s", r.raw)
	}
	fake.AddChat("chat-empty", "alice-1")
	wantError(t, e.post("shed_import", map[string]any{"import_all": true}, alice("chat-empty")), "FILE_NOT_FOUND")
	wantError(t, e.post("shed_import", map[string]any{"import_all": true}, alice("chat-of-nobody")), "FILE_NOT_FOUND")
}

func TestImportMissingFileID(t *testing.T) {
	t.Parallel()
	e, _ := importWorld(t, nil)
	r := e.post("shed_import", map[string]any{}, alice("chat-1"))
	wantError(t, r, "MISSING_FILE_ID")
	if !strings.Contains(r.Hint, "<attached_files>") {
		t.Fatalf("the hint must say where file_id comes from: %s", r.raw)
	}
	// Without a chat id the chat's files cannot be listed.
	wantError(t, e.post("shed_import", map[string]any{"import_all": true}, map[string]string{"Authorization": "Bearer tok-alice"}), "MISSING_FILE_ID")
	wantError(t, e.post("shed_import", map[string]any{"file_id": "f-report", "import_all": "maybe"}, alice("chat-1")), "INVALID_PARAMETER")
}

// TestImportOtherUsersFile: another user's file id, a missing id and a malformed id read
// exactly the same (Open WebUI answers 401 or 404; which one is never told).
func TestImportOtherUsersFile(t *testing.T) {
	t.Parallel()
	e, _ := importWorld(t, nil)
	var shapes []string
	for _, id := range []string{"f-bob", "f-nothing", "../../auths/"} {
		r := e.post("shed_import", map[string]any{"file_id": id}, alice("chat-1"))
		wantError(t, r, "FILE_NOT_FOUND")
		shapes = append(shapes, strings.ReplaceAll(r.Message+r.Hint, id, "ID"))
	}
	if shapes[0] != shapes[1] || shapes[1] != shapes[2] {
		t.Fatalf("answers differ: %q", shapes)
	}
	if files := onDisk(t, e, "users/alice-1"); len(files) != 0 {
		t.Fatalf("files written: %v", files)
	}
}

// TestImportSanitisesNames: whatever name Open WebUI reports, the file lands directly in
// the chat's Uploads folder under one safe name.
func TestImportSanitisesNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 150) + ".txt" // 304 bytes
	cases := []struct{ name, want string }{
		{"../../x", "x"},
		{"a/b", "b"},
		{`C:\fakepath\a.txt`, "a.txt"},
		{".git", "git"},
		{"..", "file-f-4"},
		{"-rf", "rf"},
		{"a\x00b.txt", "a_b.txt"},
		{"c\nd.txt", "c_d.txt"},
		{"e\u0301t\u00e9.txt", "\u00e9t\u00e9.txt"}, // NFD in, NFC out
		{"\u202etxt.exe", "_txt.exe"},
		{long, strings.Repeat("é", 98) + ".txt"},
	}
	e, fake := importWorld(t, nil)
	for i, c := range cases {
		id := "f-" + string(rune('0'+i))
		fake.AddFile("alice-1", owui.FileInfo{ID: id, Filename: c.name}, []byte(c.name))
		r := e.post("shed_import", map[string]any{"file_id": id}, alice("chat-1"))
		wantOK(t, r)
		if got := r.Data["imported"].([]any)[0].(map[string]any)["path"]; got != c.want {
			t.Errorf("%q imported as %q, want %q", c.name, got, c.want)
		}
		if readFile(t, e, aliceUploads+"/"+c.want) != c.name {
			t.Errorf("%q: content not at %q", c.name, c.want)
		}
	}
	if files := onDisk(t, e, "users/alice-1"); len(files) != len(cases) {
		t.Fatalf("files outside the chat's folder or missing: %v", files)
	}
	for _, f := range onDisk(t, e, "users/alice-1") {
		if filepath.Dir(f) != "Uploads/chat-1" {
			t.Errorf("file outside the chat's uploads: %s", f)
		}
	}
}

// TestImportConversationIDTraversal: a chat id of "../x" becomes one safe folder name.
func TestImportConversationIDTraversal(t *testing.T) {
	t.Parallel()
	e, _ := importWorld(t, nil)
	r := e.post("shed_import", map[string]any{"file_id": "f-notes"}, alice("../x"))
	wantOK(t, r)
	files := onDisk(t, e, "users/alice-1")
	if len(files) != 1 || !strings.HasPrefix(files[0], "Uploads/") || strings.Count(files[0], "/") != 2 {
		t.Fatalf("landed at %v", files)
	}
	if exists(e, "users/alice-1/x") || exists(e, "users/x") {
		t.Fatal("escaped the Uploads folder")
	}
	wantOK(t, e.post("shed_read", map[string]any{"zone": "uploads", "path": "notes.txt"}, alice("../x")))
}

// TestImportSameNameConcurrently: concurrent imports of one name never overwrite each other:
// the kernel refuses a taken name and the next "name (N)" is tried.
func TestImportSameNameConcurrently(t *testing.T) {
	t.Parallel()
	e, _ := importWorld(t, nil)
	var wg sync.WaitGroup
	paths := make([]string, 6)
	for i := range paths {
		wg.Go(func() {
			r := e.post("shed_import", map[string]any{"file_id": "f-notes"}, alice("chat-1"))
			if r.Success {
				paths[i] = r.Data["imported"].([]any)[0].(map[string]any)["path"].(string)
			}
		})
	}
	wg.Wait()
	slices.Sort(paths)
	want := []string{"notes (2).txt", "notes (3).txt", "notes (4).txt", "notes (5).txt", "notes (6).txt", "notes.txt"}
	if !slices.Equal(paths, want) {
		t.Fatalf("names %q, want %q", paths, want)
	}
	if u := e.usedBy(t, alice("chat-1")); u != 6*6 {
		t.Fatalf("usage %d", u)
	}
}
