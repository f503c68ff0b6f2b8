package core

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/internal/pgtest"
	"github.com/fileshed/fileshed/internal/testvalves"
)

// refused asserts that err is a start-up refusal carrying every one of want, and none of
// the secrets hide.
func refused(t *testing.T, what string, err error, want []string, hide ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: the server started", what)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not say %q", what, err, w)
		}
	}
	for _, h := range hide {
		if h != "" && strings.Contains(err.Error(), h) {
			t.Errorf("%s: %q shows a secret", what, err)
		}
	}
}

// TestStorageRefusesAnotherState (issue 32 item 4): a storage records its state at its first
// start; a server given another driver, or another PostgreSQL database, refuses to start
// instead of serving the files with empty state, and a database that serves one storage
// refuses another. Each refusal names the way forward.
func TestStorageRefusesAnotherState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// One server with the SQLite state, with an owner_ro record; then a replica on it.
	one := t.TempDir()
	s, err := serverOn(t, one, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.SetOwnership(ctx, store.Ownership{GroupID: "g", Path: "a.txt", Owner: "alice", Mode: "owner_ro"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	url := pgtest.URL(t)
	_, err = serverOn(t, one, postgresState(url))
	refused(t, "a replica on a SQLite storage", err, []string{"fileshed admin state-copy --to", "state.driver postgres"}, url)

	// Replicas on their storage; then a SQLite server, and a replica on another database.
	shared := t.TempDir()
	a, err := serverOn(t, shared, postgresState(url))
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	_, err = serverOn(t, shared, nil)
	refused(t, "a SQLite server on the replicas' storage", err, []string{"keeps its state in PostgreSQL", "FILESHED_STATE_DRIVER", "database test_"})
	other := pgtest.URL(t)
	_, err = serverOn(t, shared, postgresState(other))
	refused(t, "a replica on another database", err, []string{"another PostgreSQL database", "FILESHED_STATE_URL_FILE"}, other)
	// The replicas' database does not serve a second storage.
	_, err = serverOn(t, t.TempDir(), postgresState(url))
	refused(t, "another storage on the replicas' database", err, []string{"holds the state of another storage directory"}, url)
	// The right state still starts.
	if b, err := serverOn(t, shared, postgresState(url)); err != nil {
		t.Fatalf("a replica with the recorded state: %v", err)
	} else {
		b.Close()
	}
	if s, err := serverOn(t, one, nil); err != nil {
		t.Fatalf("the SQLite server again: %v", err)
	} else {
		s.Close()
	}
}

// TestOlderStorageAdoptsItsRecord: a storage without a record (an older fileshed's) adopts
// one at its next start, with either driver; one whose files show it served the other state
// is refused instead.
func TestOlderStorageAdoptsItsRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	one := t.TempDir()
	s, err := serverOn(t, one, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Remove(filepath.Join(one, StateRecordName)); err != nil {
		t.Fatal(err)
	}
	if s, err = serverOn(t, one, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if rec, ok, err := ReadStateRecord(one); err != nil || !ok || rec.Driver != store.SQLite || rec.Storage == "" {
		t.Fatalf("adopted record %+v, %v, %v", rec, ok, err)
	}

	// Replicas of an older fileshed: no record, no identity in their database.
	shared, url := t.TempDir(), pgtest.URL(t)
	a, err := serverOn(t, shared, postgresState(url))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `DELETE FROM state_identity WHERE name = 'storage'`); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if err := os.Remove(filepath.Join(shared, StateRecordName)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(shared, ".fileshed-clock")); err != nil {
		t.Fatalf("replicas leave .fileshed-clock: %v", err)
	}
	_, err = serverOn(t, shared, nil)
	refused(t, "a SQLite server on an older replicas' storage", err, []string{"was served by replicas with state.driver postgres"})
	a, err = serverOn(t, shared, postgresState(url))
	if err != nil {
		t.Fatal(err)
	}
	rec, ok, err := ReadStateRecord(shared)
	if err != nil || !ok || rec.Driver != store.Postgres || rec.Database == "" || strings.Contains(rec.Where, "postgres@") {
		t.Fatalf("adopted record %+v, %v, %v", rec, ok, err)
	}
	if got, _, err := a.db.Identity(ctx, store.IdentityStorage, ""); err != nil || got != rec.Storage {
		t.Fatalf("the database serves storage %q (%v), the record says %q", got, err, rec.Storage)
	}
}

// TestReplicasRefuseAnotherMasterKeyOrLinksSecret (issue 32 item 6): replicas of one state
// database compare fingerprints of the encryption master key and of the links secret with
// the ones recorded at the first start; a replica with another value (or none) refuses to
// start, naming the setting and never the value. After a deliberate change, recorded with
// every replica stopped (or, for the master key, by encryption rotate), the new value starts.
func TestReplicasRefuseAnotherMasterKeyOrLinksSecret(t *testing.T) {
	t.Parallel()
	const (
		key1, key2       = "replica-master-key-one-0123456789abcdef", "replica-master-key-two-0123456789abcdef"
		secret1, secret2 = "links-secret-number-one", "links-secret-number-two"
	)
	base, url := t.TempDir(), pgtest.URL(t)
	vars := func(key, secret string) map[string]string {
		v := postgresState(url)
		if key != "" {
			v["FILESHED_ENCRYPTION_MASTER_KEY"] = key
		}
		if secret != "" {
			v["FILESHED_LINKS_SECRET"] = secret
		}
		return v
	}
	a, err := serverOn(t, base, vars(key1, secret1))
	if err != nil {
		t.Fatal(err)
	}
	_, err = serverOn(t, base, vars(key2, secret1))
	refused(t, "another master key", err, []string{"encryption.master_key", "FILESHED_ENCRYPTION_MASTER_KEY", "fileshed admin encryption rotate"}, key1, key2)
	_, err = serverOn(t, base, vars("", secret1))
	refused(t, "no master key", err, []string{"encryption.master_key", "this server's none"}, key1)
	_, err = serverOn(t, base, vars(key1, secret2))
	refused(t, "another links secret", err, []string{"links.secret", "FILESHED_LINKS_SECRET", "state-fingerprints --record"}, secret1, secret2)
	_, err = serverOn(t, base, vars(key1, ""))
	refused(t, "no links secret", err, []string{"links.secret"}, secret1)
	b, err := serverOn(t, base, vars(key1, secret1))
	if err != nil {
		t.Fatalf("a replica with the same secrets: %v", err)
	}
	// A deliberate change: refused while a replica runs, recorded once they stopped.
	adm, err := New(testvalves.Config(t, base, vars(key1, secret2)), Options{Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	if err := adm.AdminRecordFingerprints(context.Background()); err == nil {
		t.Fatal("fingerprints recorded while replicas run")
	}
	a.Close()
	b.Close()
	if err := adm.AdminRecordFingerprints(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, err := serverOn(t, base, vars(key1, secret2))
	if err != nil {
		t.Fatalf("the new links secret once recorded: %v", err)
	}
	c.Close()
	// A new master key through the rotation, which records its fingerprint.
	rot, err := New(testvalves.Config(t, base, vars(key2, secret2)), Options{Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rot.Close()
	if _, err := rot.AdminRotateMasterKey(context.Background(), key1); err != nil {
		t.Fatal(err)
	}
	_, err = serverOn(t, base, vars(key1, secret2))
	refused(t, "the old master key after the rotation", err, []string{"encryption.master_key"}, key1, key2)
	if _, err := serverOn(t, base, vars(key2, secret2)); err != nil {
		t.Fatalf("the rotated master key: %v", err)
	}
}
