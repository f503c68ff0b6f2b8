package handlers_test

import (
	"strings"
	"testing"
)

// TestSQLiteKeepsTheOriginalNames: the fields and codes of the original shed_sqlite
// (reference §5.26, issue 28): a write answers last_row_id; a truncated SELECT answers
// total_rows (counted while the rest is discarded, up to sqlite_rows_max, and
// total_rows_capped says when the count stopped there); an SQL error is EXEC_ERROR (a file
// that is not a database is EXEC_ERROR too, as in the original); rows stay columns + arrays.
func TestSQLiteKeepsTheOriginalNames(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_SQLITE_ROWS_MAX": "100"})
	seedDB(t, e, 50)
	r := sq(e, "app.db", map[string]any{"query": "INSERT INTO t(name, score) VALUES ('x', 1)"})
	wantOK(t, r)
	if r.Data["last_row_id"] != 51.0 || r.Data["rows_affected"] != 1.0 {
		t.Fatalf("write: %s", r.raw)
	}
	if _, ok := r.Data["last_insert_id"]; ok {
		t.Fatalf("last_insert_id is not the original's name: %s", r.raw)
	}
	// Default limit 10 of 51 rows: the rest is counted.
	r = sq(e, "app.db", map[string]any{"query": "SELECT id, name FROM t"})
	wantOK(t, r)
	if r.Data["truncated"] != true || r.Data["row_count"] != 10.0 || r.Data["total_rows"] != 51.0 || r.Data["total_rows_capped"] != false {
		t.Fatalf("truncated select: %s", r.raw)
	}
	if !strings.Contains(r.Message, "10 of 51") {
		t.Fatalf("message: %s", r.Message)
	}
	if _, ok := r.Data["rows"].([]any)[0].([]any); !ok {
		t.Fatalf("rows are not arrays: %s", r.raw)
	}
	// More rows than sqlite_rows_max: the count stops at the cap and says so.
	r = sq(e, "app.db", map[string]any{"query": "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 1000000) SELECT i FROM c"})
	wantOK(t, r)
	if r.Data["total_rows"] != 100.0 || r.Data["total_rows_capped"] != true {
		t.Fatalf("capped count: %s", r.raw)
	}
	if !strings.Contains(r.Message, "at least 100") {
		t.Fatalf("message: %s", r.Message)
	}
	// A complete answer has no total.
	r = sq(e, "app.db", map[string]any{"query": "SELECT id FROM t LIMIT 3"})
	if _, ok := r.Data["total_rows"]; ok || r.Data["truncated"] != false {
		t.Fatalf("complete answer: %s", r.raw)
	}
	r = sq(e, "app.db", map[string]any{"query": "SELECT * FROM nope"})
	wantError(t, r, "EXEC_ERROR")
	if !strings.Contains(r.Message, "no such table: nope") || !strings.Contains(r.Hint, "sqlite_master") {
		t.Fatalf("SQL error: %s", r.raw)
	}
	e.write(zoneDir+"notes.txt", "this is not a database, just text\n")
	wantError(t, sq(e, "notes.txt", map[string]any{"query": "SELECT 1"}), "EXEC_ERROR")
}

// TestSQLiteImportKeepsTheOriginalNames: a CSV with a header and no rows creates the empty
// table with its columns (a schema), and a column named 2nd becomes _2nd.
func TestSQLiteImportKeepsTheOriginalNames(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(zoneDir+"header.csv", "name,2nd,3 rd\n")
	r := sq(e, "d.db", map[string]any{"import_csv": "header.csv", "table": "t"})
	wantOK(t, r)
	cols := r.Data["columns"].([]any)
	if r.Data["rows_imported"] != 0.0 || len(cols) != 3 || cols[1] != "_2nd" || cols[2] != "_3_rd" {
		t.Fatalf("header only: %s", r.raw)
	}
	r = sq(e, "d.db", map[string]any{"query": "SELECT name FROM pragma_table_info('t')", "limit": 0})
	wantOK(t, r)
	if got := r.raw; !strings.Contains(got, `[["name"],["_2nd"],["_3_rd"]]`) {
		t.Fatalf("table columns: %s", got)
	}
	if got := col(t, e, "d.db", "SELECT count(*) FROM t"); got[0] != 0.0 {
		t.Fatalf("rows: %v", got)
	}
}
