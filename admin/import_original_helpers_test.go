package admin_test

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
)

// The users and the group of the original storage the import tests build: ids as Open
// WebUI makes them (UUIDs), as the original requires.
const (
	alice = "0b0e8a42-5d1c-4c8e-9a57-1f0000000a11"
	bob   = "0b0e8a42-5d1c-4c8e-9a57-1f0000000b0b"
	carol = "0b0e8a42-5d1c-4c8e-9a57-1f000000c0c0"
	team  = "7f6d2c10-8a3e-4b6f-b1a2-2e00000000ee"
)

// original builds files in a storage directory laid out as the original Fileshed lays it
// out (reference §2.1): users/{id}/{Uploads/{chat},Storage/data,Documents/data(.git)},
// groups/{id}/data(.git), access_auth.sqlite.
type original struct {
	t   testing.TB
	dir string
}

// write creates a file (and its folders) of the original.
func (o original) write(rel, content string) {
	o.t.Helper()
	p := filepath.Join(o.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		o.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		o.t.Fatal(err)
	}
}

// git runs the git CLI in the folder rel of the original, as the original ran it (its own
// repository configuration only: no global or system config).
func (o original) git(rel string, args ...string) string {
	o.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = filepath.Join(o.dir, rel)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		o.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// initRepo makes data/.git as the original did: git init with its default branch, the
// repository identity, and for Documents the hooks neutralised (_init_git_repo).
func (o original) initRepo(rel, email string, neutralise bool) {
	o.t.Helper()
	if err := os.MkdirAll(filepath.Join(o.dir, rel), 0o755); err != nil {
		o.t.Fatal(err)
	}
	o.git(rel, "-c", "init.defaultBranch=master", "init", "-q")
	o.git(rel, "config", "user.email", email)
	o.git(rel, "config", "user.name", "Fileshed")
	if neutralise {
		o.git(rel, "config", "core.hooksPath", "/dev/null")
	}
}

// commit commits everything as the original did: `git add -A` then a commit whose author
// is the repository identity (author "") or a user (_git_commit_as_user).
func (o original) commit(rel, author, msg string) {
	o.t.Helper()
	o.git(rel, "add", "-A")
	args := []string{"commit", "-q", "-m", msg, "--allow-empty-message"}
	if author != "" {
		args = append(args, "--author", author+" <"+author+"@fileshed>")
	}
	o.git(rel, args...)
}

// ownershipDB creates access_auth.sqlite with the original's schema (_init_db) and rows.
func (o original) ownershipDB(rows [][4]string) {
	o.t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(o.dir, "access_auth.sqlite"))
	if err != nil {
		o.t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS file_ownership (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			group_id TEXT NOT NULL,
			file_path TEXT NOT NULL,
			owner_id TEXT NOT NULL,
			write_access TEXT NOT NULL CHECK(write_access IN ('owner', 'group', 'owner_ro')),
			created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
			updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
			UNIQUE(group_id, file_path))`,
		`CREATE INDEX IF NOT EXISTS idx_ownership_group ON file_ownership(group_id)`,
		`CREATE INDEX IF NOT EXISTS idx_ownership_owner ON file_ownership(owner_id)`,
		`CREATE INDEX IF NOT EXISTS idx_ownership_path ON file_ownership(group_id, file_path)`,
		`CREATE TABLE IF NOT EXISTS user_encryption (
			user_id TEXT PRIMARY KEY,
			encrypted_dek BLOB NOT NULL,
			dek_nonce BLOB NOT NULL,
			kek_salt BLOB NOT NULL,
			created_at TEXT NOT NULL,
			updated_at TEXT NOT NULL)`,
		`PRAGMA journal_mode=WAL`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			o.t.Fatal(err)
		}
	}
	for _, r := range rows {
		if _, err := db.Exec(`INSERT INTO file_ownership (group_id, file_path, owner_id, write_access) VALUES (?, ?, ?, ?)`,
			r[0], r[1], r[2], r[3]); err != nil {
			o.t.Fatal(err)
		}
	}
}

// treeHash hashes a directory tree as it is on disk: every entry's path, type, permission
// bits, size, modification time, and the content of files and targets of links (never
// followed). Equal hashes before and after mean the tree was left untouched.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%v\x00%d\x00%d\x00", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			io.WriteString(h, target)
		case fi.Mode().IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(h, f); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// asUser is a server on an imported storage in headers mode, called as any user.
type asUser struct {
	srv   *httptest.Server
	key   string
	close func()
}

const importKey = "import-test-api-key-0123456789"

// serveHeaders starts a real server (the handlers main builds) on base in headers mode:
// the user id and groups come from the request, as Open WebUI forwards them.
func serveHeaders(t *testing.T, cfg *valves.Config) *asUser {
	t.Helper()
	cfg.Auth.Mode, cfg.Auth.APIKey = "headers", importKey
	h, _, svc, err := handlers.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	a := &asUser{srv: srv, key: importKey, close: func() { srv.Close(); svc.Close() }}
	t.Cleanup(a.close)
	return a
}

// call calls tool as user, member of team, in the conversation chat.
func (a *asUser) call(t *testing.T, user, chat, tool string, body map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, a.srv.URL+"/"+tool, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("X-OpenWebUI-User-Id", user)
	req.Header.Set("X-Shed-Groups", team)
	if chat != "" {
		req.Header.Set("X-OpenWebUI-Chat-Id", chat)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// ok calls and requires success; it returns data.
func (a *asUser) ok(t *testing.T, user, chat, tool string, body map[string]any) map[string]any {
	t.Helper()
	r := a.call(t, user, chat, tool, body)
	if r["success"] != true {
		t.Fatalf("%s as %s: %v", tool, user, r)
	}
	data, _ := r["data"].(map[string]any)
	return data
}

// refused calls and requires the error code.
func (a *asUser) refused(t *testing.T, user, tool string, body map[string]any, code string) {
	t.Helper()
	if r := a.call(t, user, "", tool, body); r["success"] != false || r["error"] != code {
		t.Fatalf("%s as %s: want %s, got %v", tool, user, code, r)
	}
}
