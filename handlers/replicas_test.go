package handlers_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplicasSignLinksWithOneKey (issue 25 item 4): with the PostgreSQL state the
// link-signing key lives in the database, first writer wins, so a link made on one replica
// downloads from another. The key file in the storage is no longer read: an empty one, as a
// replica saw it while another was still writing it, used to stop the server from starting.
func TestReplicasSignLinksWithOneKey(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "links.key"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	vars := withPostgres(t, map[string]string{"FILESHED_STORAGE_BASE_PATH": base})
	a, b := startLinks(t, vars), startLinks(t, vars)
	a.write("users/alice/Storage/data/report.txt", "made on a")
	url, _ := a.link("alice", map[string]any{"zone": "storage", "path": "report.txt"})["url"].(string)
	token := url[strings.LastIndex(url, "/dl/")+len("/dl/"):]
	for name, e := range map[string]*env{"a": a, "b": b} {
		if got := e.get("GET", e.srv.URL+"/dl/"+token, nil); got.status != 200 || got.body != "made on a" {
			t.Errorf("the link on replica %s: %d %q", name, got.status, got.body)
		}
	}
}

// TestSQLiteUnderPostgresUsesRollbackJournal (issue 25 item 4): WAL keeps its index in shared
// memory, which replicas on different hosts do not share, so with the PostgreSQL state
// shed_sqlite leaves databases in journal_mode delete, whatever it creates, imports into or
// writes (a WAL database from before is converted at its next write).
func TestSQLiteUnderPostgresUsesRollbackJournal(t *testing.T) {
	e := start(t, withPostgres(t, nil))
	wantOK(t, sq(e, "data.db", map[string]any{"query": "CREATE TABLE t(a)"}))
	e.write(zoneDir+"rows.csv", "a,b\n1,2\n")
	wantOK(t, sq(e, "imported.db", map[string]any{"import_csv": "rows.csv", "table": "r"}))
	old, err := sql.Open("sqlite", filepath.Join(e.base, zoneDir, "old.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec("PRAGMA journal_mode=WAL; CREATE TABLE t(a)"); err != nil {
		t.Fatal(err)
	}
	old.Close()
	wantOK(t, sq(e, "old.db", map[string]any{"query": "INSERT INTO t VALUES (1)"}))
	for _, db := range []string{"data.db", "imported.db", "old.db"} {
		if got := col(t, e, db, "PRAGMA journal_mode"); len(got) != 1 || got[0] != "delete" {
			t.Errorf("%s: journal mode %v, want delete", db, got)
		}
		if _, err := os.Stat(filepath.Join(e.base, zoneDir, db+"-wal")); err == nil {
			t.Errorf("%s has a WAL file", db)
		}
	}
}

// TestMetricsShowTheLocksOfReplicas: with the PostgreSQL state /metrics shows the lock
// connections, the locks lost and the time calls waited for locks.
func TestMetricsShowTheLocksOfReplicas(t *testing.T) {
	e := start(t, withPostgres(t, nil))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "a.md", "content": "a\n"}, nil))
	_, body := scrape(t, e, "")
	for _, want := range []string{`fileshed_lock_connections{state="in_use"} 0`, `fileshed_lock_connections{state="idle"}`,
		`fileshed_locks_lost_total 0`, `fileshed_operation_duration_seconds_count{op="lock_wait"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
