package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sq calls shed_sqlite in the storage zone with extra arguments.
func sq(e *env, path string, args map[string]any) reply {
	e.t.Helper()
	return sqIn(e, "storage", path, args)
}

// sqIn calls shed_sqlite in a zone with extra arguments.
func sqIn(e *env, zone, path string, args map[string]any) reply {
	e.t.Helper()
	body := map[string]any{"zone": zone, "path": path}
	for k, v := range args {
		body[k] = v
	}
	return e.post("shed_sqlite", body, nil)
}

// seedDB creates app.db with table t (id, name, score) holding n rows.
func seedDB(t *testing.T, e *env, n int) {
	t.Helper()
	wantOK(t, sq(e, "app.db", map[string]any{"query": "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL)"}))
	if n > 0 {
		wantOK(t, sq(e, "app.db", map[string]any{"query": "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < ?) INSERT INTO t SELECT i, 'name' || i, i * 1.5 FROM c",
			"params": []any{n}}))
	}
}

// TestSQLiteQuery covers query mode: writes report rows affected and the last id, reads
// answer columns + rows, params (list, object, string), the row caps, CTEs and VALUES
// returning rows, every SQLite type as JSON.
func TestSQLiteQuery(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	seedDB(t, e, 50)
	r := sq(e, "app.db", map[string]any{"query": "INSERT INTO t(name, score) VALUES (?, ?)", "params": []any{"x", 2.5}})
	wantOK(t, r)
	if r.Data["rows_affected"] != 1.0 || r.Data["last_row_id"] != 51.0 {
		t.Fatalf("insert: %s", r.raw)
	}
	r = sq(e, "app.db", map[string]any{"query": "SELECT id, name FROM t WHERE id <= :n ORDER BY id", "params": map[string]any{":n": 3}})
	wantOK(t, r)
	if got := r.Data["columns"].([]any); len(got) != 2 || got[0] != "id" || r.Data["row_count"] != 3.0 || r.Data["truncated"] != false {
		t.Fatalf("select: %s", r.raw)
	}
	if row := r.Data["rows"].([]any)[2].([]any); row[0] != 3.0 || row[1] != "name3" {
		t.Fatalf("row 3: %v", row)
	}
	// params sent as a JSON string, the limit as a string.
	r = sq(e, "app.db", map[string]any{"query": "SELECT id FROM t WHERE id > ? ORDER BY id", "params": "[40]", "limit": "5"})
	wantOK(t, r)
	if r.Data["row_count"] != 5.0 || r.Data["truncated"] != true || r.Data["limit_applied"] != 5.0 || !strings.Contains(r.Message, "output_csv") {
		t.Fatalf("limit: %s", r.raw)
	}
	// Default: 10 rows; a LIMIT in the SQL lifts the default; limit=0 is the maximum.
	if r = sq(e, "app.db", map[string]any{"query": "SELECT * FROM t"}); r.Data["row_count"] != 10.0 || r.Data["truncated"] != true {
		t.Fatalf("default limit: %s", r.raw)
	}
	if r = sq(e, "app.db", map[string]any{"query": "SELECT * FROM t LIMIT 30"}); r.Data["row_count"] != 30.0 || r.Data["truncated"] != false {
		t.Fatalf("SQL LIMIT: %s", r.raw)
	}
	if r = sq(e, "app.db", map[string]any{"query": "SELECT * FROM t", "limit": 0}); r.Data["row_count"] != 51.0 {
		t.Fatalf("limit 0: %s", r.raw)
	}
	// CTEs and VALUES return rows.
	r = sq(e, "app.db", map[string]any{"query": "WITH x AS (SELECT 7 AS v) SELECT v FROM x"})
	if wantOK(t, r); r.Data["rows"].([]any)[0].([]any)[0] != 7.0 {
		t.Fatalf("CTE: %s", r.raw)
	}
	r = sq(e, "app.db", map[string]any{"query": "VALUES (1, 'a'), (2, 'b')"})
	if wantOK(t, r); r.Data["row_count"] != 2.0 {
		t.Fatalf("VALUES: %s", r.raw)
	}
	// Types: NULL, integer, real, text, BLOB (bounded hex), huge TEXT (head and tail), infinity.
	r = sq(e, "app.db", map[string]any{"query": "SELECT NULL, 42, 0.5, 'é', x'00ff', randomblob(1000), printf('%.*c', 100000, 'a') || 'END', 1e999"})
	wantOK(t, r)
	row := r.Data["rows"].([]any)[0].([]any)
	if row[0] != nil || row[1] != 42.0 || row[2] != 0.5 || row[3] != "é" {
		t.Fatalf("scalars: %v", row[:4])
	}
	if b := row[4].(map[string]any); b["blob_hex"] != "00ff" || b["blob_bytes"] != 2.0 {
		t.Fatalf("blob: %v", b)
	}
	if b := row[5].(map[string]any); len(b["blob_hex"].(string)) != 128 || b["blob_bytes"] != 1000.0 || b["truncated"] != true {
		t.Fatalf("big blob: %v", b)
	}
	if s := row[6].(string); len(s) > 4200 || !strings.HasSuffix(s, "END") || !strings.Contains(s, "cut") {
		t.Fatalf("huge text: %d bytes, tail %q", len(s), s[len(s)-20:])
	}
	if row[7] != "Inf" {
		t.Fatalf("infinity: %v", row[7])
	}
	// A DATE column answers its text, as stored.
	wantOK(t, sq(e, "app.db", map[string]any{"query": "CREATE TABLE d(day DATE, at TIMESTAMP)"}))
	wantOK(t, sq(e, "app.db", map[string]any{"query": "INSERT INTO d VALUES ('2024-03-01', '2024-03-01 10:30:00'), ('not a date', 5)"}))
	r = sq(e, "app.db", map[string]any{"query": "SELECT day, at FROM d"})
	rows := r.Data["rows"].([]any)
	if rows[0].([]any)[0] != "2024-03-01" || rows[0].([]any)[1] != "2024-03-01 10:30:00" || rows[1].([]any)[0] != "not a date" {
		t.Fatalf("dates: %s", r.raw)
	}
}

// TestSQLiteErrors covers the parameter and SQL errors of query mode.
func TestSQLiteErrors(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	seedDB(t, e, 3)
	wantError(t, sq(e, "app.db", nil), "MISSING_PARAMETER")
	wantError(t, sq(e, "app.db", map[string]any{"query": "SELECT 1", "import_csv": "x.csv"}), "INVALID_PARAMETER")
	r := sq(e, "app.db", map[string]any{"query": "SELECT * FROM nope"})
	wantError(t, r, "EXEC_ERROR")
	if !strings.Contains(r.Message, "no such table: nope") {
		t.Fatalf("message: %s", r.Message)
	}
	wantError(t, sq(e, "app.db", map[string]any{"query": "SELECT ?", "params": []any{map[string]any{"a": 1}}}), "INVALID_PARAMETER")
	wantError(t, sq(e, "app.db", map[string]any{"query": "SELECT 1; SELECT 2"}), "INVALID_PARAMETER")
	// Trailing semicolons and comments are one statement; semicolons in strings do not count.
	wantOK(t, sq(e, "app.db", map[string]any{"query": "SELECT 'a;b' AS x; -- done\n ;"}))
	e.write(zoneDir+"notes.txt", "this is not a database, just text\n")
	wantError(t, sq(e, "notes.txt", map[string]any{"query": "SELECT 1"}), "EXEC_ERROR")
	wantError(t, sq(e, "storage/app.db", map[string]any{"query": "SELECT 1"}), "PATH_STARTS_WITH_ZONE")
	wantError(t, sq(e, ".", map[string]any{"query": "SELECT 1"}), "NOT_A_FILE")
	// The database cannot be its own CSV.
	wantError(t, sq(e, "app.db", map[string]any{"query": "SELECT 1", "output_csv": "app.db"}), "INVALID_PARAMETER")
	wantError(t, sq(e, "app.db", map[string]any{"import_csv": "./app.db", "table": "x"}), "INVALID_PARAMETER")
	wantError(t, sq(e, "app.db", map[string]any{"query": "SELECT 1", "output_csv": "app.db-wal"}), "INVALID_PARAMETER")
	// A new database is created with its folders on a write.
	wantOK(t, sq(e, "sub/dir/new.db", map[string]any{"query": "CREATE TABLE x(a)"}))
	if _, err := os.Stat(filepath.Join(e.base, zoneDir, "sub/dir/new.db")); err != nil {
		t.Fatal(err)
	}
}
