package handlers_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

// col returns the first column of every row of a query.
func col(t *testing.T, e *env, db, q string) []any {
	t.Helper()
	r := sq(e, db, map[string]any{"query": q, "limit": 0})
	wantOK(t, r)
	var out []any
	for _, row := range r.Data["rows"].([]any) {
		out = append(out, row.([]any)[0])
	}
	return out
}

// TestSQLiteImport covers the import's detections and conversions: delimiter and
// encoding detection, BOM, type inference (INTEGER/REAL/TEXT, leading zeros kept), NA
// values as NULL, decimal comma, dates, skip_rows, no header, quoting (RFC 4180).
func TestSQLiteImport(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(zoneDir+"plain.csv", "id,name,price,zip,note\n1,apple,1.5,01234,\"a, quoted \"\"note\"\"\"\n2,pear,2,75001,NA\n3,fig,,02000,\"two\nlines\"\n")
	r := sq(e, "data.db", map[string]any{"import_csv": "plain.csv", "table": "fruit"})
	wantOK(t, r)
	info := r.Data["import_info"].(map[string]any)
	types := info["column_types"].(map[string]any)
	if r.Data["rows_imported"] != 3.0 || info["detected_delimiter"] != "," || info["detected_encoding"] != "utf-8" ||
		types["id"] != "INTEGER" || types["price"] != "REAL" || types["zip"] != "TEXT" || types["name"] != "TEXT" {
		t.Fatalf("import: %s", r.raw)
	}
	// A new database is loaded with a rollback journal, then left in the configured mode
	// (WAL; with the PostgreSQL state, where replicas may share the file, delete).
	if got := col(t, e, "data.db", "PRAGMA journal_mode"); got[0] != e.cfg.SQLiteJournal() {
		t.Fatalf("journal mode after the import: %v", got)
	}
	if _, err := os.Stat(filepath.Join(e.base, zoneDir, "data.db-journal")); err == nil {
		t.Fatal("a journal was left beside the database")
	}
	if got := col(t, e, "data.db", "SELECT note FROM fruit ORDER BY id"); got[0] != `a, quoted "note"` || got[1] != nil || got[2] != "two\nlines" {
		t.Fatalf("notes: %v", got)
	}
	if got := col(t, e, "data.db", "SELECT typeof(price) || ':' || coalesce(price, 'null') FROM fruit ORDER BY id"); got[0] != "real:1.5" || got[1] != "real:2.0" || got[2] != "null:null" {
		t.Fatalf("prices: %v", got)
	}
	// European Excel export: semicolons, cp1252, decimal comma, day-first dates, a title line.
	body, _ := charmap.Windows1252.NewEncoder().String("Report 2024\nDate;Montant;Libellé\n31/12/2024;1.234,50;café €\n01/02/2024;-3,5;thé\n")
	e.write(zoneDir+"euro.csv", body)
	r = sq(e, "data.db", map[string]any{"import_csv": "euro.csv", "table": "ventes", "skip_rows": 1, "decimal": ",",
		"date_columns": []string{"Date"}, "date_format": "dayfirst"})
	wantOK(t, r)
	info = r.Data["import_info"].(map[string]any)
	if info["detected_delimiter"] != ";" || info["detected_encoding"] != "cp1252" || r.Data["rows_imported"] != 2.0 {
		t.Fatalf("euro: %s", r.raw)
	}
	if cols := r.Data["columns"].([]any); cols[2] != "Libellé" {
		t.Fatalf("columns: %v", cols)
	}
	if got := col(t, e, "data.db", "SELECT Date || '|' || Montant || '|' || Libellé FROM ventes ORDER BY rowid"); got[0] != "2024-12-31|1234.5|café €" || got[1] != "2024-02-01|-3.5|thé" {
		t.Fatalf("euro rows: %v", got)
	}
	// Tabs, a UTF-8 BOM, no header, strftime date format.
	e.write(zoneDir+"tab.tsv", "\xef\xbb\xbfa\t2024/03/01\t7\nb\t2024/03/02\t8\n")
	r = sq(e, "data.db", map[string]any{"import_csv": "tab.tsv", "table": "tsv", "has_header": false,
		"date_columns": []string{"col_2"}, "date_format": "%Y/%m/%d"})
	wantOK(t, r)
	info = r.Data["import_info"].(map[string]any)
	if info["detected_delimiter"] != "\t" || info["detected_encoding"] != "utf-8-sig" || info["generated_columns"] != true {
		t.Fatalf("tsv: %s", r.raw)
	}
	if got := col(t, e, "data.db", "SELECT col_1 || col_2 || col_3 FROM tsv ORDER BY rowid"); got[0] != "a2024-03-017" {
		t.Fatalf("tsv rows: %v", got)
	}
	// Pipes given explicitly, latin-1 declared.
	e.write(zoneDir+"pipe.csv", "k|v\nx|\xe9t\xe9\n")
	r = sq(e, "data.db", map[string]any{"import_csv": "pipe.csv", "table": "p", "delimiter": "|", "encoding": "latin-1"})
	wantOK(t, r)
	if got := col(t, e, "data.db", "SELECT v FROM p"); got[0] != "été" {
		t.Fatalf("latin-1: %v", got)
	}
}

// TestSQLiteImportIfExists covers fail (TABLE_EXISTS), replace and append.
func TestSQLiteImportIfExists(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(zoneDir+"a.csv", "x,y\n1,a\n2,b\n")
	e.write(zoneDir+"wide.csv", "x,y,z\n1,a,0\n")
	wantOK(t, sq(e, "d.db", map[string]any{"import_csv": "a.csv", "table": "t"}))
	r := sq(e, "d.db", map[string]any{"import_csv": "a.csv", "table": "t"})
	wantError(t, r, "TABLE_EXISTS")
	if r.Details["table"] != "t" {
		t.Fatalf("details: %s", r.raw)
	}
	r = sq(e, "d.db", map[string]any{"import_csv": "a.csv", "table": "t", "if_exists": "append"})
	if wantOK(t, r); r.Data["appended"] != true {
		t.Fatalf("append: %s", r.raw)
	}
	if got := col(t, e, "d.db", "SELECT count(*) FROM t"); got[0] != 4.0 {
		t.Fatalf("after append: %v", got)
	}
	wantError(t, sq(e, "d.db", map[string]any{"import_csv": "wide.csv", "table": "t", "if_exists": "append"}), "EXEC_ERROR")
	wantOK(t, sq(e, "d.db", map[string]any{"import_csv": "wide.csv", "table": "t", "if_exists": "replace"}))
	if got := col(t, e, "d.db", "SELECT count(*) FROM t"); got[0] != 1.0 {
		t.Fatalf("after replace: %v", got)
	}
	for _, args := range []map[string]any{
		{"import_csv": "a.csv"},
		{"import_csv": "a.csv", "table": "t", "if_exists": "merge"},
		{"import_csv": "a.csv", "table": "1bad"},
		{"import_csv": "a.csv", "table": "sqlite_master"},
		{"import_csv": "a.csv", "table": "u", "skip_rows": -1},
		{"import_csv": "a.csv", "table": "u", "encoding": "klingon"},
		{"import_csv": "a.csv", "table": "u", "delimiter": ";;"},
		{"import_csv": "a.csv", "table": "u", "date_columns": []string{"nope"}},
		{"import_csv": "a.csv", "table": "u", "decimal": "x"},
	} {
		r := sq(e, "d.db", args)
		if r.Error != "INVALID_PARAMETER" && r.Error != "MISSING_PARAMETER" {
			t.Errorf("%v: %s", args, r.raw)
		}
	}
	wantError(t, sq(e, "d.db", map[string]any{"import_csv": "missing.csv", "table": "u"}), "FILE_NOT_FOUND")
}

// TestSQLiteImportHostile: empty files, a CSV with 100,000 columns, a 1 GB CSV with one
// line, invalid UTF-8 in a declared UTF-8 file, malformed quoting: each a clear error (or
// reported skipped lines), and the database is left as it was.
func TestSQLiteImportHostile(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "4000"})
	e.write(zoneDir+"empty.csv", "")
	e.write(zoneDir+"blank.csv", "\n\n\n")
	wantError(t, sq(e, "d.db", map[string]any{"import_csv": "empty.csv", "table": "t"}), "CSV_EMPTY")
	wantError(t, sq(e, "d.db", map[string]any{"import_csv": "blank.csv", "table": "t"}), "CSV_EMPTY")

	e.write(zoneDir+"wide.csv", strings.Repeat("c,", 99_999)+"c\n"+strings.Repeat("1,", 99_999)+"1\n")
	r := sq(e, "d.db", map[string]any{"import_csv": "wide.csv", "table": "t"})
	wantError(t, r, "CSV_TOO_WIDE")
	if r.Details["columns"] != 100000.0 {
		t.Fatalf("details: %s", r.raw)
	}

	// 1 GB without a newline (sparse: no disk used). Refused after 16 MB, not loaded.
	big := filepath.Join(e.base, zoneDir, "big.csv")
	f, err := os.Create(big)
	must(t, err)
	must(t, f.Truncate(1<<30))
	f.Close()
	r = sq(e, "d.db", map[string]any{"import_csv": "big.csv", "table": "t"})
	wantError(t, r, "CSV_PARSE_ERROR")
	if !strings.Contains(r.Message, "longer than") {
		t.Fatalf("message: %s", r.Message)
	}
	must(t, os.Remove(big))

	e.write(zoneDir+"bad.csv", "a,b\nok,1\n\xff\xfe,2\n")
	r = sq(e, "d.db", map[string]any{"import_csv": "bad.csv", "table": "t", "encoding": "utf-8"})
	wantError(t, r, "CSV_PARSE_ERROR")
	if r.Details["line"] != 3.0 || !strings.Contains(r.Hint, "cp1252") {
		t.Fatalf("invalid UTF-8: %s", r.raw)
	}

	e.write(zoneDir+"quotes.csv", "a,b\n1,x\n2,bad\"quote\n3,\"ok\"\n4,y,extra\n")
	r = sq(e, "d.db", map[string]any{"import_csv": "quotes.csv", "table": "q"})
	wantOK(t, r)
	info := r.Data["import_info"].(map[string]any)
	if r.Data["rows_imported"] != 2.0 || info["skipped_count"] != 2.0 {
		t.Fatalf("malformed lines: %s", r.raw)
	}
	e.write(zoneDir+"allbad.csv", "a,\"b\n1,2\n")
	wantError(t, sq(e, "d.db", map[string]any{"import_csv": "allbad.csv", "table": "z"}), "CSV_PARSE_ERROR")
	// Nothing but q was created by all of this.
	if got := col(t, e, "d.db", "SELECT group_concat(name) FROM sqlite_master"); got[0] != "q" {
		t.Fatalf("tables: %v", got)
	}
}

// TestSQLiteImportTimeout: an import longer than the timeout is stopped (TIMEOUT) and
// rolled back: no table, the server still serves.
func TestSQLiteImportTimeout(t *testing.T) {
	t.Parallel() // owns its server; waits more than it computes (issue 34)
	if testing.Short() {
		t.Skip("writes a 70 MB CSV")
	}
	e := start(t, map[string]string{"FILESHED_EXEC_TIMEOUT_DEFAULT": "1"})
	p := filepath.Join(e.base, zoneDir, "huge.csv")
	must(t, os.MkdirAll(filepath.Dir(p), 0o700))
	f, err := os.Create(p)
	must(t, err)
	w := bufio.NewWriter(f)
	w.WriteString("a,b,c,d\n")
	for i := range 1_500_000 {
		fmt.Fprintf(w, "%d,text %d,%d.5,x\n", i, i, i)
	}
	must(t, w.Flush())
	must(t, f.Close())
	wantError(t, sq(e, "d.db", map[string]any{"import_csv": "huge.csv", "table": "h"}), "TIMEOUT")
	if got := col(t, e, "d.db", "SELECT count(*) FROM sqlite_master"); got[0] != 0.0 {
		t.Fatalf("tables after the timeout: %v", got)
	}
}
