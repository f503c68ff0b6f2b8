package handlers_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// forgeWAL is bob's offline forgery: a copy of the database (read like any member may),
// changed by stmt in a connection that never checkpoints; the log it leaves is a valid
// -wal for the original file.
func forgeWAL(t *testing.T, db []byte, stmt string) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(p, db, 0o600); err != nil {
		t.Fatal(err)
	}
	c := rawDB(t, p)
	c.SetMaxOpenConns(1)
	// journal_mode=wal: under the PostgreSQL state the server keeps user databases in delete
	// mode, and a log forged for them must be refused all the same.
	for _, q := range []string{"PRAGMA journal_mode=wal", "PRAGMA wal_autocheckpoint=0", stmt} {
		if _, err := c.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	wal, err := os.ReadFile(p + "-wal")
	if err != nil || len(wal) == 0 {
		t.Fatalf("no forged log: %v", err)
	}
	return wal
}

// ledger is alice's protected database in group team, with mode; it returns its bytes.
func ledger(t *testing.T, g *groupEnv, mode string) []byte {
	t.Helper()
	for _, q := range []string{"CREATE TABLE entries(who TEXT, amount INTEGER)", "INSERT INTO entries VALUES ('alice', 100)"} {
		wantOK(t, g.as("alice", "shed_sqlite", in(map[string]any{"path": "ledger.db", "query": q})))
	}
	wantOK(t, g.as("alice", "shed_group_set_mode", in(map[string]any{"path": "ledger.db", "mode": mode})))
	b, ok := g.file("ledger.db")
	if !ok {
		t.Fatal("no ledger.db")
	}
	return []byte(b)
}

// aliceSees is what alice's SELECT answers of the ledger.
func aliceSees(t *testing.T, g *groupEnv) string {
	t.Helper()
	r := g.as("alice", "shed_sqlite", in(map[string]any{"path": "ledger.db", "query": "SELECT who, amount FROM entries ORDER BY rowid"}))
	wantOK(t, r)
	rows, _ := r.Data["rows"].([]any)
	var out []string
	for _, row := range rows {
		cells := row.([]any)
		out = append(out, cells[0].(string))
	}
	return strings.Join(out, ",")
}

// TestSQLiteForgedCompanionIsRefused: bob forges a -wal for alice's protected ledger.db
// (mode owner and owner_ro) and plants it as a new file with shed_create_file, with
// shed_exec (cp), or inside a zip; each is refused or undone, alice's SELECT never sees bob's
// rows and her file does not change.
func TestSQLiteForgedCompanionIsRefused(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"owner", "owner_ro"} {
		t.Run(mode, func(t *testing.T) {
			g := startGroups(t, nil)
			before := ledger(t, g, mode)
			wal := forgeWAL(t, before, "INSERT INTO entries VALUES ('bob', 1000000)")
			b64 := base64.StdEncoding.EncodeToString(wal)
			want := map[string]string{"owner": "FILE_OWNER_ONLY", "owner_ro": "FILE_READ_ONLY"}[mode]

			// shed_create_file of the new file ledger.db-wal (and -journal, -shm).
			for _, name := range []string{"ledger.db-wal", "ledger.db-journal", "ledger.db-shm"} {
				r := g.as("bob", "shed_create_file", in(map[string]any{"path": name, "file_type": "bytes", "content_format": "base64", "content": b64}))
				wantError(t, r, want)
				if r.Details["database"] != "ledger.db" {
					t.Fatalf("%s: the refusal does not name the database: %s", name, r.raw)
				}
			}
			// shed_patch_text, a rename and a copy onto the name.
			wantError(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "ledger.db-wal", "content": "x", "position": "end"})), want)
			wantOK(t, g.as("bob", "shed_create_file", in(map[string]any{"path": "bob.wal", "file_type": "bytes", "content_format": "base64", "content": b64})))
			wantError(t, g.as("bob", "shed_rename", in(map[string]any{"old_path": "bob.wal", "new_path": "ledger.db-wal"})), want)
			// A zip holding the companion.
			var zb bytes.Buffer
			zw := zip.NewWriter(&zb)
			w, _ := zw.Create("ledger.db-wal")
			_, _ = w.Write(wal)
			_ = zw.Close()
			wantOK(t, g.as("bob", "shed_create_file", in(map[string]any{"path": "w.zip", "file_type": "bytes", "content_format": "base64",
				"content": base64.StdEncoding.EncodeToString(zb.Bytes())})))
			wantError(t, g.as("bob", "shed_unzip", in(map[string]any{"src": "w.zip"})), want)

			// shed_exec: the command runs, the guard removes the companion and says so.
			r := g.as("bob", "shed_exec", in(map[string]any{"cmd": "cp", "args": []string{"bob.wal", "ledger.db-wal"}}))
			wantOK(t, r)
			if !slices.Contains(reverted(r), "ledger.db-wal") {
				t.Fatalf("the guard did not report the companion: %s", r.raw)
			}
			if _, ok := g.file("ledger.db-wal"); ok {
				t.Fatal("the forged -wal is still there after the command")
			}
			if got := aliceSees(t, g); got != "alice" {
				t.Fatalf("alice sees %q", got)
			}
			if after, _ := g.file("ledger.db"); after != string(before) {
				t.Fatal("alice's ledger.db changed")
			}
			// Alice herself may still write her owner-mode database.
			if mode == "owner" {
				wantOK(t, g.as("alice", "shed_sqlite", in(map[string]any{"path": "ledger.db", "query": "INSERT INTO entries VALUES ('alice', 5)"})))
			}
		})
	}
}

// TestSQLiteStrayCompanionIsRemoved: a companion that reached the folder before the
// database was protected (planted while the file was open to every member, or left by a
// crash) and that no open connection uses is removed before shed_sqlite opens a protected
// database; alice's SELECT never sees bob's rows, in owner and owner_ro mode.
func TestSQLiteStrayCompanionIsRemoved(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"owner", "owner_ro"} {
		t.Run(mode, func(t *testing.T) {
			g := startGroups(t, nil)
			for _, q := range []string{"CREATE TABLE entries(who TEXT, amount INTEGER)", "INSERT INTO entries VALUES ('alice', 100)"} {
				wantOK(t, g.as("alice", "shed_sqlite", in(map[string]any{"path": "ledger.db", "query": q})))
			}
			before, _ := g.file("ledger.db")
			wal := forgeWAL(t, []byte(before), "INSERT INTO entries VALUES ('bob', 1000000)")
			// Mode group: bob may write the database, so he may create its log too.
			wantOK(t, g.as("bob", "shed_create_file", in(map[string]any{"path": "ledger.db-wal", "file_type": "bytes", "content_format": "base64",
				"content": base64.StdEncoding.EncodeToString(wal)})))
			wantOK(t, g.as("alice", "shed_group_set_mode", in(map[string]any{"path": "ledger.db", "mode": mode})))
			if got := aliceSees(t, g); got != "alice" {
				t.Fatalf("alice sees %q", got)
			}
			if _, ok := g.file("ledger.db-wal"); ok {
				t.Fatal("the stray -wal is still there")
			}
			if after, _ := g.file("ledger.db"); after != before {
				t.Fatal("alice's ledger.db changed")
			}
		})
	}
}

// TestSQLiteCompanionOfARunningProgramIsBusy: while another program (a command's sqlite3)
// has alice's protected database open, its -wal and -shm are not strays: shed_sqlite answers
// busy instead of removing them, and opens the database once the program has ended.
func TestSQLiteCompanionOfARunningProgramIsBusy(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("no sqlite3")
	}
	g := startGroups(t, nil)
	ledger(t, g, "owner")
	cli := exec.Command("sqlite3", filepath.Join(g.base, "groups", "team", "data", "ledger.db"))
	stdin, _ := cli.StdinPipe()
	stdout, _ := cli.StdoutPipe()
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	defer cli.Wait()
	defer stdin.Close()
	// In WAL mode, as the server leaves it with the SQLite state (with the PostgreSQL state
	// it keeps delete mode, and a program may switch).
	if _, err := stdin.Write([]byte("PRAGMA journal_mode=wal;\nSELECT count(*) FROM entries;\n")); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	for _, want := range []string{"wal\n", "1\n"} {
		if line, err := out.ReadString('\n'); err != nil || line != want {
			t.Fatalf("sqlite3: %q %v, want %q", line, err, want)
		}
	}
	r := g.as("alice", "shed_sqlite", in(map[string]any{"path": "ledger.db", "query": "SELECT count(*) FROM entries"}))
	wantError(t, r, "EXEC_ERROR")
	if !strings.Contains(r.Message, "open in another program") || !strings.Contains(r.Hint, "Retry") {
		t.Fatalf("busy: %s", r.raw)
	}
	if _, ok := g.file("ledger.db-wal"); !ok {
		t.Fatal("the running program's log was removed")
	}
	stdin.Close()
	if err := cli.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := aliceSees(t, g); got != "alice" {
		t.Fatalf("alice sees %q", got)
	}
}

// forgeJournal is the rollback-journal form of the forgery: a hot journal whose "original"
// pages are those of a copy changed by stmt, so that rolling it back writes bob's pages
// into the database.
func forgeJournal(t *testing.T, db []byte, stmt string) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(p, db, 0o600); err != nil {
		t.Fatal(err)
	}
	c := rawDB(t, p)
	c.SetMaxOpenConns(1)
	// The changed copy, then a transaction that journals its pages and stays open.
	for _, q := range []string{stmt, "PRAGMA synchronous=OFF", "BEGIN", "DELETE FROM entries"} {
		if _, err := c.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	j, err := os.ReadFile(p + "-journal")
	if err != nil || len(j) == 0 {
		t.Fatalf("no forged journal: %v", err)
	}
	return j
}

// TestSQLiteForgedJournalIsRefused: the same attack with journal_mode=delete and a hot
// -journal, planted before the database was protected: alice's SELECT does not roll bob's
// pages into her database.
func TestSQLiteForgedJournalIsRefused(t *testing.T) {
	t.Parallel()
	for mode, refusal := range map[string]string{"owner": "FILE_OWNER_ONLY", "owner_ro": "FILE_READ_ONLY"} {
		t.Run(mode, func(t *testing.T) {
			g := startGroups(t, map[string]string{"FILESHED_SQLITE_JOURNAL_MODE": "delete"})
			for _, q := range []string{"CREATE TABLE entries(who TEXT, amount INTEGER)", "INSERT INTO entries VALUES ('alice', 100)"} {
				wantOK(t, g.as("alice", "shed_sqlite", in(map[string]any{"path": "ledger.db", "query": q})))
			}
			before, _ := g.file("ledger.db")
			j := forgeJournal(t, []byte(before), "INSERT INTO entries VALUES ('bob', 1000000)")
			plant := func() reply {
				return g.as("bob", "shed_create_file", in(map[string]any{"path": "ledger.db-journal", "file_type": "bytes", "content_format": "base64",
					"content": base64.StdEncoding.EncodeToString(j)}))
			}
			wantOK(t, plant()) // mode group: allowed
			wantOK(t, g.as("alice", "shed_group_set_mode", in(map[string]any{"path": "ledger.db", "mode": mode})))
			if got := aliceSees(t, g); got != "alice" {
				t.Fatalf("alice sees %q", got)
			}
			if after, _ := g.file("ledger.db"); after != before {
				t.Fatal("alice's ledger.db changed")
			}
			wantError(t, plant(), refusal)
		})
	}
}
