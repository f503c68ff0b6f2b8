package sqlq_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/sqlq"
)

var lim = sqlq.Limits{Rows: 100, Bytes: 1 << 20, Cell: 1000, Blob: 16}

func open(t *testing.T, dir string, o sqlq.Options) *sqlq.DB {
	t.Helper()
	d, err := sqlq.Open(context.Background(), filepath.Join(dir, "t.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func run(t *testing.T, d *sqlq.DB, q string, args ...any) (*sqlq.Answer, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s, err := sqlq.Single(q)
	if err != nil {
		return nil, err
	}
	return d.Run(ctx, s, args, lim, nil)
}

func TestGuardRails(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, sqlq.Options{Create: true, JournalMode: "wal"})
	if _, err := run(t, d, "CREATE TABLE t(a INTEGER, b TEXT)"); err != nil {
		t.Fatal(err)
	}
	forbidden := map[string]string{
		"ATTACH '/etc/passwd' AS x":          "ATTACH",
		"ATTACH 'other.db' AS x":             "ATTACH",
		"VACUUM INTO '" + dir + "/x.db'":     "",
		"SELECT load_extension('/lib/x.so')": "function load_extension",
		"PRAGMA writable_schema=1":           "PRAGMA writable_schema",
		"PRAGMA temp_store_directory='/tmp'": "PRAGMA temp_store_directory",
		"PRAGMA user_version=3":              "PRAGMA user_version",
		"PRAGMA database_list":               "PRAGMA database_list",
	}
	for q, what := range forbidden {
		_, err := run(t, d, q)
		var fe *sqlq.ForbiddenError
		if !errors.As(err, &fe) {
			t.Errorf("%s: want a ForbiddenError, got %v", q, err)
			continue
		}
		if what != "" && fe.What != what {
			t.Errorf("%s: denied %q, want %q", q, fe.What, what)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.db")); err == nil {
		t.Fatal("VACUUM INTO wrote a file")
	}
	for _, q := range []string{"PRAGMA table_info(t)", "PRAGMA user_version", "PRAGMA integrity_check", "SELECT * FROM pragma_table_info('t')"} {
		if _, err := run(t, d, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// TestImportBatchesAndRetype: rows go in by batches (and a tail); a value past the
// sample that does not fit the inferred type restarts the load with types from the whole
// file, so nothing is converted wrongly ("007" stays text).
func TestImportBatchesAndRetype(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	sb.WriteString("a,b,c\n")
	for i := range 7001 {
		a, b := fmt.Sprint(i), fmt.Sprint(i+1)
		if i == 6500 {
			a = "x"
		}
		if i == 7000 {
			b = "007"
		}
		fmt.Fprintf(&sb, "%s,%s,%d.5\n", a, b, i)
	}
	p := filepath.Join(dir, "r.csv")
	if err := os.WriteFile(p, []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	d := open(t, dir, sqlq.Options{Create: true})
	rep, err := d.Import(context.Background(), func() (io.ReadCloser, error) { return os.Open(p) }, sqlq.ImportOptions{Table: "r", IfExists: "fail", HasHeader: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 7001 || strings.Join(rep.Types, ",") != "TEXT,TEXT,REAL" {
		t.Fatalf("report: %+v", rep)
	}
	a, err := run(t, d, "SELECT count(*), sum(c), (SELECT b FROM r WHERE rowid = 7001), (SELECT typeof(a) FROM r WHERE rowid = 1) FROM r")
	if err != nil {
		t.Fatal(err)
	}
	if row := a.Rows[0]; row[0] != int64(7001) || row[1] != 7001*7000/2+7001*0.5 || row[2] != "007" || row[3] != "text" {
		t.Fatalf("rows: %v", row)
	}
}

// TestReadOnly: a read-only open refuses every write in the authorizer (Write denials),
// temporary tables included, and reads work.
func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	w := open(t, dir, sqlq.Options{Create: true})
	if _, err := run(t, w, "CREATE TABLE t(a)"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	d, err := sqlq.Open(context.Background(), filepath.Join(dir, "t.db"), sqlq.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, q := range []string{"INSERT INTO t VALUES (1)", "CREATE TEMP TABLE x(a)", "DROP TABLE t", "CREATE INDEX i ON t(a)"} {
		_, err := run(t, d, q)
		var fe *sqlq.ForbiddenError
		if !errors.As(err, &fe) || !fe.Write {
			t.Errorf("%s: want a write denial, got %v", q, err)
		}
	}
	if a, err := run(t, d, "SELECT count(*) FROM t"); err != nil || a.Rows[0][0] != int64(0) {
		t.Fatalf("read: %v %v", a, err)
	}
}
