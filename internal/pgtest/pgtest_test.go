package pgtest

import (
	"database/sql"
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

// Each URL is its own empty database on the private server, reached over its socket only.
func TestURLGivesFreshDatabases(t *testing.T) {
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatalf("two tests share %s", a)
	}
	if !strings.Contains(a, "host=%2F") {
		t.Errorf("URL %s does not use the private unix socket", a)
	}
	dba, err := sql.Open("pgx", a)
	if err != nil {
		t.Fatal(err)
	}
	defer dba.Close()
	dbb, err := sql.Open("pgx", b)
	if err != nil {
		t.Fatal(err)
	}
	defer dbb.Close()
	if _, err := dba.Exec(`CREATE TABLE t (x TEXT)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := dbb.QueryRow(`SELECT count(*) FROM pg_tables WHERE tablename = 't'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the second database sees %d tables t (%v), want 0", n, err)
	}
	var listen string
	if err := dba.QueryRow(`SHOW listen_addresses`).Scan(&listen); err != nil || listen != "" {
		t.Errorf("listen_addresses = %q (%v), want no TCP listener", listen, err)
	}
}
