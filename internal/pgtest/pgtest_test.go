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

// A database a test gave back comes to the next test empty: what the test made is gone (its
// tables, a schema of its own), and so are its sessions with their advisory locks, even one
// it left open.
func TestReusedDatabaseIsEmpty(t *testing.T) {
	var first string
	t.Run("uses", func(t *testing.T) {
		first = URL(t)
		db, err := sql.Open("pgx", first)
		if err != nil {
			t.Fatal(err)
		}
		// left open on purpose: a leaked session holding a lock
		for _, q := range []string{`CREATE TABLE t (x TEXT)`, `CREATE SCHEMA extra`, `CREATE TABLE extra.u (y INT)`, `SELECT pg_advisory_lock(42)`} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	})
	second := URL(t)
	if second != first {
		t.Fatalf("the freed database was not reused: %s, then %s", first, second)
	}
	db, err := sql.Open("pgx", second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables, schemas int
	var locked bool
	if err := db.QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`).Scan(&tables); err != nil || tables != 0 {
		t.Errorf("%d tables left (%v)", tables, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM pg_namespace WHERE nspname = 'extra'`).Scan(&schemas); err != nil || schemas != 0 {
		t.Errorf("schema extra left (%d, %v)", schemas, err)
	}
	if err := db.QueryRow(`SELECT pg_try_advisory_lock(42)`).Scan(&locked); err != nil || !locked {
		t.Errorf("the leaked session's advisory lock is still held (%v)", err)
	}
	if _, err := db.Exec(`CREATE TABLE public.again (z INT)`); err != nil {
		t.Errorf("the public schema cannot be used again: %v", err)
	}
}
