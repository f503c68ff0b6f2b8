package handlers_test

import "testing"

// TestGoldenSQLite pins one answer per shape the sqlite family builds: a write, rows
// whole and cut at the limit, a CSV export, CSV imports with and without skipped lines
// and date failures, appended.
func TestGoldenSQLite(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	q := func(args map[string]any) reply {
		args["zone"], args["path"] = "storage", "k.db"
		return e.post("shed_sqlite", args, nil)
	}
	e.write("users/local/Storage/data/people.csv", "name,age,born\nann,31,2020-01-02\nbob,x,2021-03-04\n")
	e.write("users/local/Storage/data/dates.csv", "name,born\nann,2020-01-02\nbob,someday\n")
	e.write("users/local/Storage/data/bad.csv", "name,age,born\nann,31,2020-01-02\n\"broken,1,2\ncid,4,not a date\n")

	pinAnswer(t, "sqlite_write", q(map[string]any{"query": "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, b BLOB)"}))
	pinAnswer(t, "sqlite_insert", q(map[string]any{"query": "INSERT INTO t (v, b) VALUES ('a', x'00ff'), ('b', NULL), ('c', 1.5)"}))
	pinAnswer(t, "sqlite_rows", q(map[string]any{"query": "SELECT * FROM t"}))
	pinAnswer(t, "sqlite_rows_limited", q(map[string]any{"query": "SELECT id, v FROM t ORDER BY id", "limit": 2}))
	pinAnswer(t, "sqlite_export", q(map[string]any{"query": "SELECT id, v FROM t", "output_csv": "out.csv"}))
	pinAnswer(t, "sqlite_import", q(map[string]any{"import_csv": "people.csv", "table": "people", "date_columns": []string{"born"}}))
	pinAnswer(t, "sqlite_import_append", q(map[string]any{"import_csv": "people.csv", "table": "people", "if_exists": "append"}))
	pinAnswer(t, "sqlite_import_date_failures", q(map[string]any{"import_csv": "dates.csv", "table": "dates", "date_columns": []string{"born"}}))
	pinAnswer(t, "sqlite_import_skipped", q(map[string]any{"import_csv": "bad.csv", "table": "bad", "date_columns": []string{"born"}}))
}
