package admin_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/handlers"
	"github.com/fileshed/fileshed/internal/pgtest"
)

// TestAdminStateCopyFromOneServerToReplicas (issue 32 item 4): the README's steps from one
// server to replicas. state-copy is refused while the server runs; once it stopped, the
// SQLite state goes into an empty PostgreSQL database, table by table with its rows
// counted; a replica then serves the storage with its state (an encrypted user's files read
// back), a server with the SQLite state is refused on it, and a second copy — or a copy into
// a database that holds rows — is refused. The URL is never printed.
func TestAdminStateCopyFromOneServerToReplicas(t *testing.T) {
	t.Parallel() // owns its storages and its PostgreSQL database
	base, url := t.TempDir(), pgtest.URL(t)
	const key = "state-copy-master-key-0123456789abcdef"
	urlFile := filepath.Join(t.TempDir(), "state-url")
	if err := os.WriteFile(urlFile, []byte(url+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := serveWith(t, config(t, base, "--encryption-master-key", key))
	l.ok(t, "shed_encryption", map[string]any{"action": "setup"})
	l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": "secret.txt", "content": "sealed content"})
	if code, _, errOut := run(t, base, "state-copy", "--to-file", urlFile); code != 1 || !strings.Contains(errOut, "server is running") {
		t.Fatalf("state-copy beside the server: %d %q", code, errOut)
	}
	l.close()

	code, out, errOut := run(t, base, "state-copy", "--to-file", urlFile)
	if code != 0 || !strings.Contains(out, "user_keys") || !strings.Contains(out, "audit") {
		t.Fatalf("state-copy: %d %q %q", code, out, errOut)
	}
	if strings.Contains(out+errOut, url) {
		t.Error("state-copy printed the URL")
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "user_keys" && f[1] != "1" {
			t.Errorf("user_keys copied: %s", line)
		}
	}

	// The one server's secrets came along: a replica without its master key is refused.
	if _, _, svc, err := handlers.Build(config(t, base, "--state-driver", "postgres", "--state-url", url),
		slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
		svc.Close()
		t.Fatal("a replica without the server's master key started")
	} else if !strings.Contains(err.Error(), "encryption.master_key") {
		t.Fatalf("a replica without the server's master key: %v", err)
	}
	replica := config(t, base, "--encryption-master-key", key, "--state-driver", "postgres", "--state-url", url)
	r := serveWith(t, replica)
	got := r.call(t, "shed_read", map[string]any{"zone": "storage", "path": "secret.txt"}, "")
	if data, _ := got["data"].(map[string]any); got["success"] != true || data["content"] != "sealed content" {
		t.Fatalf("the encrypted file on the replica: %v", got)
	}
	r.close()
	if _, _, svc, err := handlers.Build(config(t, base, "--encryption-master-key", key), slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
		svc.Close()
		t.Fatal("a SQLite server started on the copied storage")
	} else if !strings.Contains(err.Error(), "keeps its state in PostgreSQL") {
		t.Fatalf("a SQLite server on the copied storage: %v", err)
	}
	if code, _, errOut := run(t, base, "state-copy", "--to", url); code != 1 || !strings.Contains(errOut, "already in PostgreSQL") {
		t.Fatalf("a second state-copy: %d %q", code, errOut)
	}
	// Another SQLite storage into the replicas' (non-empty) database.
	other := t.TempDir()
	serve(t, other).close()
	if code, _, errOut := run(t, other, "state-copy", "--to", url); code != 1 || !strings.Contains(errOut, "not empty") {
		t.Fatalf("state-copy into a database that holds rows: %d %q", code, errOut)
	}
	if code, _, errOut := run(t, other, "state-copy"); code != 1 || !strings.Contains(errOut, "--to-file") {
		t.Fatalf("state-copy without a target: %d %q", code, errOut)
	}
}
