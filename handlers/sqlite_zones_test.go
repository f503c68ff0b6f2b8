package handlers_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSQLiteDocumentsCommits: in Documents each writing call commits the database once,
// checkpointed (the committed file is the whole database), reads commit nothing; a CSV
// export is committed too.
func TestSQLiteDocumentsCommits(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	doc := func(args map[string]any) reply { return sqIn(e, "documents", "db/app.db", args) }
	wantOK(t, doc(map[string]any{"query": "CREATE TABLE t(a TEXT)"}))
	wantOK(t, doc(map[string]any{"query": "INSERT INTO t VALUES ('x'), ('y, \"z\"')"}))
	wantOK(t, doc(map[string]any{"query": "SELECT * FROM t"}))
	if h := history(t, e, "db/app.db"); len(h) != 2 {
		t.Fatalf("want 2 commits of the database, got %d: %v", len(h), h)
	}
	disk, err := os.ReadFile(filepath.Join(e.base, "users/local/Documents/data/db/app.db"))
	must(t, err)
	if size := git(t, e, "cat-file", "-s", "HEAD:db/app.db"); size != strconv.Itoa(len(disk)) {
		t.Fatalf("committed %s bytes, disk has %d", size, len(disk))
	}
	for _, j := range []string{"-wal", "-journal", "-shm"} {
		if _, err := os.Stat(filepath.Join(e.base, "users/local/Documents/data/db/app.db"+j)); err == nil {
			t.Errorf("%s left beside the database", j)
		}
	}
	r := doc(map[string]any{"query": "SELECT a, x'cafe' AS b FROM t ORDER BY a", "output_csv": "out/t.csv"})
	wantOK(t, r)
	if r.Data["rows_exported"] != 2.0 || r.Data["output_csv"] != "out/t.csv" {
		t.Fatalf("export: %s", r.raw)
	}
	got, err := os.ReadFile(filepath.Join(e.base, "users/local/Documents/data/out/t.csv"))
	must(t, err)
	if string(got) != "a,b\r\nx,cafe\r\n\"y, \"\"z\"\"\",cafe\r\n" {
		t.Fatalf("csv: %q", got)
	}
	if h := history(t, e, "out/t.csv"); len(h) != 1 {
		t.Fatalf("the export was not committed: %v", h)
	}
	// An import into a new database is one commit too, of the whole database.
	e.write("users/local/Documents/data/in.csv", "a,b\n1,x\n2,y\n")
	wantOK(t, sqIn(e, "documents", "imp.db", map[string]any{"import_csv": "in.csv", "table": "t"}))
	if h := history(t, e, "imp.db"); len(h) != 1 {
		t.Fatalf("import commits: %v", h)
	}
	disk, err = os.ReadFile(filepath.Join(e.base, "users/local/Documents/data/imp.db"))
	must(t, err)
	if size := git(t, e, "cat-file", "-s", "HEAD:imp.db"); size != strconv.Itoa(len(disk)) {
		t.Fatalf("committed %s bytes, disk has %d", size, len(disk))
	}
	// A group zone works the same way.
	g := start(t, map[string]string{"FILESHED_GROUPS_STATIC": `{"team":["local"]}`})
	r = g.post("shed_sqlite", map[string]any{"zone": "group", "group": "team", "path": "g.db", "query": "CREATE TABLE t(a)"}, nil)
	wantOK(t, r)
	r = g.post("shed_sqlite", map[string]any{"zone": "group", "group": "team", "path": "g.db", "query": "SELECT count(*) FROM t"}, nil)
	wantOK(t, r)
}

// TestSQLiteQuota: the database's growth counts against the quota and a write past it is
// refused by SQLite (QUOTA_EXCEEDED) without changing the data; the accounted usage follows
// the disk; a CSV export over max_file_size_mb is FILE_TOO_LARGE.
func TestSQLiteQuota(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1", "FILESHED_MAX_FILE_SIZE_MB": "1"})
	wantOK(t, sq(e, "q.db", map[string]any{"query": "CREATE TABLE t(b BLOB)"}))
	if u, d := e.used(t), diskUsage(t, e, "local"); u != d {
		t.Fatalf("usage %d, disk %d", u, d)
	}
	wantOK(t, sq(e, "q.db", map[string]any{"query": "INSERT INTO t VALUES (randomblob(300000))"}))
	r := sq(e, "q.db", map[string]any{"query": "INSERT INTO t SELECT randomblob(300000) FROM (VALUES (1), (2), (3))"})
	wantError(t, r, "QUOTA_EXCEEDED")
	if got := col(t, e, "q.db", "SELECT count(*) FROM t"); got[0] != 1.0 {
		t.Fatalf("rows after the refused write: %v", got)
	}
	if u, d := e.used(t), diskUsage(t, e, "local"); u != d {
		t.Fatalf("usage %d, disk %d", u, d)
	}
	r = sq(e, "q.db", map[string]any{"query": "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 5000) SELECT i, printf('%.*c', 500, 'x') FROM c", "output_csv": "big.csv"})
	wantError(t, r, "FILE_TOO_LARGE")
	if _, err := os.Stat(filepath.Join(e.base, zoneDir, "big.csv")); err == nil {
		t.Fatal("a refused export left a file")
	}
	wantError(t, sq(e, "q.db", map[string]any{"query": "SELECT 1", "output_csv": "../x.csv"}), "PATH_ESCAPE")
}

// TestSQLiteFileType: shed_file_type recognises a database and points to shed_sqlite.
func TestSQLiteFileType(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	wantOK(t, sq(e, "a.db", map[string]any{"query": "CREATE TABLE t(a)"}))
	r := e.post("shed_file_type", map[string]any{"zone": "storage", "path": "a.db"}, nil)
	wantOK(t, r)
	if r.Data["mime"] != "application/vnd.sqlite3" || r.Data["magic"] != "SQLite database" || !strings.Contains(r.Message, "shed_sqlite") {
		t.Fatalf("file type: %s", r.raw)
	}
}

// TestSQLiteGuide: the csv_to_sqlite guide is served by shed_help and listed.
func TestSQLiteGuide(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.post("shed_help", map[string]any{"howto": "csv_to_sqlite"}, nil)
	wantOK(t, r)
	if !strings.Contains(r.Data["help"].(string), "if_exists") {
		t.Fatalf("guide: %s", r.raw)
	}
	r = e.post("shed_help", nil, nil)
	if _, ok := r.Data["howtos"].(map[string]any)["csv_to_sqlite"]; !ok {
		t.Fatalf("not listed: %s", r.raw)
	}
}
