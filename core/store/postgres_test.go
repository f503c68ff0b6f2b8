package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/fileshed/fileshed/internal/pgtest"
)

// TestConcurrentMigrationsApplyOnce is the test for replicas (and a migration job) starting
// together on a new PostgreSQL database: 5 processes' worth of Open at once all succeed, and
// the schema is applied once. Without the advisory lock they race in CREATE TABLE (a unique
// violation in PostgreSQL's catalog) or apply a migration twice.
func TestConcurrentMigrationsApplyOnce(t *testing.T) {
	t.Parallel()
	const rounds, n = 3, 5
	for round := range rounds {
		src := testSource(t, Postgres)
		dbs := make([]*DB, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				dbs[i], errs[i] = OpenSource(src)
			})
		}
		close(start)
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d: Open %d: %v", round, i, errs[i])
			}
			defer dbs[i].Close()
		}
		var rows, versions int
		if err := dbs[0].queryRow(context.Background(), `SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations`).
			Scan(&rows, &versions); err != nil {
			t.Fatal(err)
		}
		if rows != len(migrations) || versions != len(migrations) {
			t.Errorf("round %d: schema_migrations has %d rows of %d versions, want %d once each", round, rows, versions, len(migrations))
		}
	}
}

// TestMigrateReportsVersions: Migrate (fileshed admin migrate) says which version it found
// and which it left, and a second run finds nothing to do; on both drivers.
func TestMigrateReportsVersions(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		src := testSource(t, drv)
		ctx := context.Background()
		for i, want := range [][2]int{{0, len(migrations)}, {len(migrations), len(migrations)}} {
			before, after, err := Migrate(ctx, src)
			if err != nil || before != want[0] || after != want[1] {
				t.Errorf("run %d: Migrate = %d, %d, %v; want %d, %d", i+1, before, after, err, want[0], want[1])
			}
		}
	})
}

// The PostgreSQL URL is a secret (it may carry the password): no error shows it, whether
// the URL does not parse or the server does not answer.
func TestPostgresErrorsHideTheURL(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-Pa55"
	for _, u := range []string{
		"postgres://fileshed:" + secret + "@127.0.0.1:1/state?connect_timeout=2", // nothing listens on port 1
		"postgres://fileshed:" + secret + "@[::1:5432/state",                     // does not parse
		"postgres://fileshed:" + secret + "@host:notaport/state",
		"host=127.0.0.1 port=1 password=" + secret + " connect_timeout=2",
	} {
		d, err := OpenSource(Source{Driver: Postgres, URL: u})
		if err == nil {
			d.Close()
			t.Fatalf("%q opened", u)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows the password: %v", err)
		}
		if _, _, err := Migrate(context.Background(), Source{Driver: Postgres, URL: u}); err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("Migrate: %v", err)
		}
	}
}

// TestPostgresPoolIsBounded: a server keeps at most pgMaxConns connections to PostgreSQL
// and names itself in pg_stat_activity.
func TestPostgresPoolIsBounded(t *testing.T) {
	t.Parallel()
	d := openTest(t, Postgres)
	if got := d.sql.Stats().MaxOpenConnections; got != pgMaxConns {
		t.Errorf("pool bound %d, want %d", got, pgMaxConns)
	}
	var app, sync string
	if err := d.queryRow(context.Background(), `SHOW application_name`).Scan(&app); err != nil || app != "fileshed" {
		t.Errorf("application_name = %q (%v), want fileshed", app, err)
	}
	// The SQLite driver's durability (synchronous=NORMAL): a commit does not wait for its
	// WAL flush.
	if err := d.queryRow(context.Background(), `SHOW synchronous_commit`).Scan(&sync); err != nil || sync != "off" {
		t.Errorf("synchronous_commit = %q (%v), want off", sync, err)
	}
	// A URL's own settings are kept.
	d2, err := OpenSource(Source{Driver: Postgres, URL: pgtest.URL(t) + "&application_name=fileshed-a&synchronous_commit=on"})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if err := d2.queryRow(context.Background(), `SHOW application_name`).Scan(&app); err != nil || app != "fileshed-a" {
		t.Errorf("application_name = %q (%v), want the URL's", app, err)
	}
	if err := d2.queryRow(context.Background(), `SHOW synchronous_commit`).Scan(&sync); err != nil || sync != "on" {
		t.Errorf("synchronous_commit = %q (%v), want the URL's", sync, err)
	}
}

// TestIntegrityCheck: fileshed admin verify's database check passes on a sound state on
// both drivers; on PostgreSQL it fails on a schema that is not this fileshed's or a table
// that cannot be read.
func TestIntegrityCheck(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		if err := d.Audit(ctx, AuditEntry{UserID: "u", ConvID: "c", Tool: "shed_tree", Path: "a\x00", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
		if err := d.IntegrityCheck(ctx); err != nil {
			t.Fatalf("sound database: %v", err)
		}
		if drv != Postgres {
			return
		}
		if _, err := d.sql.Exec(`DELETE FROM schema_migrations WHERE version = $1`, len(migrations)); err != nil {
			t.Fatal(err)
		}
		if err := d.IntegrityCheck(ctx); err == nil || !strings.Contains(err.Error(), "schema version") {
			t.Errorf("old schema: %v", err)
		}
		if _, err := d.sql.Exec(`INSERT INTO schema_migrations (version, name, applied_us) VALUES ($1, 'x', 0)`, len(migrations)); err != nil {
			t.Fatal(err)
		}
		if _, err := d.sql.Exec(`DROP TABLE user_keys`); err != nil {
			t.Fatal(err)
		}
		if err := d.IntegrityCheck(ctx); err == nil || !strings.Contains(err.Error(), "user_keys") {
			t.Errorf("missing table: %v", err)
		}
	})
}

// TestBackupOfPostgresStateSaysPgDump: the file copy of fileshed admin backup cannot copy a
// PostgreSQL state; it says what to use instead.
func TestBackupOfPostgresStateSaysPgDump(t *testing.T) {
	t.Parallel()
	d := openTest(t, Postgres)
	if err := d.BackupTo(context.Background(), t.TempDir()+"/x.sqlite"); !errors.Is(err, ErrNoFileBackup) {
		t.Errorf("BackupTo = %v, want ErrNoFileBackup", err)
	}
}

// TestIntegrityCheckReadsEveryTable: the PostgreSQL integrity check's table list is exactly
// the tables the migrations create (a new table must be added to it).
func TestIntegrityCheckReadsEveryTable(t *testing.T) {
	t.Parallel()
	d := openTest(t, Postgres)
	rows, err := d.query(context.Background(), `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	if !sameSet(got, tables) {
		t.Errorf("the schema has the tables %v, the integrity check reads %v", got, tables)
	}
}
