package admin_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/internal/pgtest"
)

// TestAdminMigrate: `fileshed admin migrate` applies the migrations and exits, saying the
// schema version before and after; run again it has nothing to do; a server then starts on
// the migrated state. On PostgreSQL it needs no storage directory (a migration job mounts
// no volume). A schema newer than the binary is refused.
func TestAdminMigrate(t *testing.T) {
	t.Parallel()
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			base, flags := t.TempDir(), []string(nil)
			var url string
			if driver == "postgres" {
				url = pgtest.URL(t)
				base, flags = filepath.Join(t.TempDir(), "no-volume"), []string{"--state-driver", "postgres", "--state-url", url}
			}
			code, out, errOut := runWith(t, config(t, base, flags...), "migrate")
			if code != 0 || out != fmt.Sprintf("state database (%s): schema version 0 -> %d\n", driver, store.SchemaVersion()) {
				t.Fatalf("first migrate: %d %q %q", code, out, errOut)
			}
			code, out, errOut = runWith(t, config(t, base, flags...), "migrate")
			if code != 0 || out != fmt.Sprintf("state database (%s): schema version %d, nothing to migrate\n", driver, store.SchemaVersion()) {
				t.Fatalf("second migrate: %d %q %q", code, out, errOut)
			}
			if driver == "postgres" {
				if strings.Contains(out+errOut, url) {
					t.Errorf("the output shows state.url")
				}
				// The server starts on the migrated state (and its own storage directory).
				base = t.TempDir()
				l := serveWith(t, config(t, base, flags...))
				l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": "a.txt", "content": "a"})
				l.close()
				db, err := sql.Open("pgx", url)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied_us) VALUES (99, 'future', 0)`); err != nil {
					t.Fatal(err)
				}
				code, _, errOut = runWith(t, config(t, base, flags...), "migrate")
				if code != 1 || !strings.Contains(errOut, fmt.Sprintf("schema version 99, newer than this fileshed knows (%d)", store.SchemaVersion())) {
					t.Errorf("migrate of a newer schema: %d %q", code, errOut)
				}
			}
		})
	}
}

// TestAdminVerifyOnPostgres: verify checks a PostgreSQL state (its schema version, every
// table read through) with the repositories and quotas, and still finds drift.
func TestAdminVerifyOnPostgres(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	flags := []string{"--state-driver", "postgres", "--state-url", pgtest.URL(t)}
	l := serveWith(t, config(t, base, flags...))
	l.ok(t, "shed_create_file", map[string]any{"zone": "documents", "path": "a.md", "content": "a"})
	code, out, errOut := runWith(t, config(t, base, flags...), "verify")
	if code != 0 || !strings.Contains(out, `"database": "ok"`) || !strings.Contains(out, `"user local documents": "ok"`) {
		t.Fatalf("verify of a sound storage: %d %s %s", code, out, errOut)
	}
	if err := os.MkdirAll(filepath.Join(base, "users/local/Storage/data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "users/local/Storage/data/behind.txt"), []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The drift is the 5 bytes written behind the server's back (the usage holds a.md and
	// its history).
	code, out, _ = runWith(t, config(t, base, flags...), "verify")
	var rep struct {
		Quota []struct {
			Used   int64 `json:"used_bytes"`
			OnDisk int64 `json:"on_disk_bytes"`
		} `json:"quota"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 1 || err != nil || len(rep.Quota) != 1 || rep.Quota[0].OnDisk != rep.Quota[0].Used+5 {
		t.Fatalf("verify with drift: %d %q", code, out)
	}
}
