package handlers_test

import (
	"database/sql"
	"net/url"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/internal/pgtest"
)

// TestStateDatabaseRefusingConnections: PostgreSQL out of connections for fileshed (its
// max_connections reached by the replicas, or here the role's CONNECTION LIMIT) answered
// every call with INTERNAL_ERROR and "report the request id": it is STATE_UNAVAILABLE now,
// with a hint that a retry may work (and the cause in the server's log, not the answer), and
// the server serves again once connections are free.
func TestStateDatabaseRefusingConnections(t *testing.T) {
	su := pgtest.URL(t)
	admin, err := sql.Open("pgx", su)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	u, err := url.Parse(su)
	if err != nil {
		t.Fatal(err)
	}
	db, role := strings.TrimPrefix(u.Path, "/"), "fileshed_"+strings.TrimPrefix(u.Path, "/")
	for _, q := range []string{"CREATE ROLE " + role + " LOGIN", "GRANT ALL ON DATABASE " + db + " TO " + role} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	inDB, err := sql.Open("pgx", su) // the grant on the schema is made in the database itself
	if err != nil {
		t.Fatal(err)
	}
	defer inDB.Close()
	if _, err := inDB.Exec("GRANT ALL ON SCHEMA public TO " + role); err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	e := start(t, map[string]string{"FILESHED_STATE_DRIVER": "postgres", "FILESHED_STATE_URL": u.String()})
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "a.txt", "content": "a"}, nil))

	for _, q := range []string{"ALTER ROLE " + role + " CONNECTION LIMIT 0",
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + role + "'"} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	r := e.post("shed_create_file", map[string]any{"zone": "storage", "path": "b.txt", "content": "b"}, nil)
	wantError(t, r, "STATE_UNAVAILABLE")
	if !strings.Contains(r.Hint, "retry in a moment") || strings.Contains(r.raw, "postgres://") || strings.Contains(r.raw, role) {
		t.Fatalf("status %d: %s", r.Status, r.raw)
	}
	if exists(e, execDir+"b.txt") {
		t.Fatal("b.txt was written without its reservation")
	}

	if _, err := admin.Exec("ALTER ROLE " + role + " CONNECTION LIMIT -1"); err != nil {
		t.Fatal(err)
	}
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "b.txt", "content": "b"}, nil))
}
