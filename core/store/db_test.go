package store

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestMigrationsAreNumberedInOrder(t *testing.T) {
	t.Parallel()
	for i, m := range migrations {
		if m.version != i+1 {
			t.Errorf("migrations[%d] has version %d, want %d", i, m.version, i+1)
		}
		if m.name == "" || len(m.stmts) == 0 {
			t.Errorf("migration %d has no name or no statements", m.version)
		}
	}
}

func TestOpenTwiceIsIdempotent(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		ctx := context.Background()
		src := testSource(t, drv)
		for round := range 3 {
			d, err := OpenSource(src)
			if err != nil {
				t.Fatalf("round %d: Open: %v", round, err)
			}
			var rows, maxVersion int
			if err := d.queryRow(ctx, `SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&rows, &maxVersion); err != nil {
				t.Fatal(err)
			}
			if rows != len(migrations) || maxVersion != len(migrations) {
				t.Errorf("round %d: schema_migrations has %d rows up to %d, want %d", round, rows, maxVersion, len(migrations))
			}
			// Data written in one round survives the next open (no migration re-ran over it).
			u := Owner{"user", "alice"}
			if got, _ := d.Usage(ctx, u); got != (Amount{int64(round), int64(round)}) {
				t.Errorf("round %d: usage %+v, want %d", round, got, round)
			}
			if err := d.Adjust(ctx, u, Amount{1, 1}); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestConcurrentOpensOfNewFileSucceed is the regression test for replicas starting together:
// SQLite refuses the switch to WAL with SQLITE_BUSY, without waiting, when another connection
// opens the same new file at that moment (a few rounds in 100 without the retry).
func TestConcurrentOpensOfNewFileSucceed(t *testing.T) {
	t.Parallel()
	const rounds, n = 100, 8
	for round := range rounds {
		path := filepath.Join(t.TempDir(), "fileshed.sqlite")
		dbs := make([]*DB, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { dbs[i], errs[i] = Open(path) })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d: Open %d: %v", round, i, errs[i])
			}
		}
		var rows int
		if err := dbs[0].sql.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != len(migrations) {
			t.Errorf("round %d: schema_migrations has %d rows, want %d", round, rows, len(migrations))
		}
		for _, d := range dbs {
			d.Close()
		}
	}
}

// A state database written by a newer fileshed is refused at start, on both drivers, with a
// message that says so and what to run instead.
func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		src := testSource(t, drv)
		d, err := OpenSource(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.sql.Exec(`INSERT INTO schema_migrations (version, name, applied_us) VALUES (999, 'future', 0)`); err != nil {
			t.Fatal(err)
		}
		d.Close()
		for _, open := range []func() error{
			func() error {
				d, err := OpenSource(src)
				if err == nil {
					d.Close()
				}
				return err
			},
			func() error { _, _, err := Migrate(context.Background(), src); return err },
		} {
			err := open()
			if err == nil {
				t.Fatal("a database from a newer fileshed was accepted")
			}
			if want := "schema version 999, newer than this fileshed knows (" + strconv.Itoa(len(migrations)) + ")"; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	})
}

func TestOpenConfiguresEveryConnection(t *testing.T) {
	t.Parallel()
	d := openTest(t, SQLite)
	ctx := context.Background()
	// Hold several connections at once so the check is not only about the first one.
	conns := make([]interface{ Close() error }, 0, maxConns)
	for range maxConns {
		c, err := d.sql.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		pragmas := []struct {
			name string
			want string
		}{
			{"journal_mode", "wal"},
			{"synchronous", "1"}, // NORMAL
			{"foreign_keys", "1"},
			{"busy_timeout", "5000"},
			{"cache_size", strconv.Itoa(-cacheKiB)}, // bounded page cache per connection
		}
		for _, p := range pragmas {
			var got string
			if err := c.QueryRowContext(ctx, "PRAGMA "+p.name).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != p.want {
				t.Errorf("PRAGMA %s = %s, want %s", p.name, got, p.want)
			}
		}
	}
	for _, c := range conns {
		c.Close()
	}
	if got := d.sql.Stats().MaxOpenConnections; got != maxConns {
		t.Errorf("pool bound %d, want %d", got, maxConns)
	}
}

// A storage path is configuration, but it still must reach SQLite intact: the driver cuts
// the DSN at the first '?', and SQLite decodes '%' escapes in file: URIs.
func TestOpenPathsWithURIMetacharacters(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"plain", "with space", "q?mode=ro", "hash#frag", "pct%41", "amp&_txlock=deferred", "ünï",
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			d, err := Open(filepath.Join(dir, "fileshed.sqlite"))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if err := d.Adjust(context.Background(), Owner{"user", "u"}, Amount{Bytes: 1}); err != nil {
				t.Fatalf("write: %v", err)
			}
			d.Close()
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), "fileshed.sqlite") {
					t.Errorf("stray file %q next to the database", e.Name())
				}
			}
			if info, err := os.Stat(filepath.Join(dir, "fileshed.sqlite")); err != nil || info.Size() == 0 {
				t.Errorf("database not written at the given path: %v", err)
			}
		})
	}
}

func TestStateFilesArePrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, err := Open(filepath.Join(dir, "fileshed.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Adjust(context.Background(), Owner{"user", "u"}, Amount{Bytes: 1}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fileshed.sqlite", "fileshed.sqlite-wal", "fileshed.sqlite-shm"} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s has mode %o, want 600", name, perm)
		}
	}
}

func TestOpenErrorsHideHostPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notDB := filepath.Join(dir, "a-directory")
	if err := os.Mkdir(notDB, 0o700); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.sqlite")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path string }{
		{"missing parent", filepath.Join(dir, "missing", "fileshed.sqlite")},
		{"directory", notDB},
		{"not a database", garbage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Open(tc.path)
			if err == nil {
				d.Close()
				t.Fatal("Open succeeded")
			}
			if strings.Contains(err.Error(), dir) {
				t.Errorf("error %q contains the host path", err)
			}
		})
	}
}
