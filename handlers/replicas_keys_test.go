package handlers_test

import (
	"testing"
)

// replicaOf starts one more server on the storage directory and PostgreSQL state of vars
// (withPostgres with FILESHED_STORAGE_BASE_PATH).
func replicaOf(t *testing.T, vars map[string]string) *env {
	t.Helper()
	cfg := config(t, vars)
	cfg.StorageBasePath = vars["FILESHED_STORAGE_BASE_PATH"]
	return serve(t, cfg)
}

// TestReplicasSeeEncryptionChangedOnAnother (issue 25: after shed_encryption setup on one
// server the others kept writing plaintext): with the PostgreSQL state each Storage and
// Uploads call checks the user's key against the database, so a replica that knew the user
// without a key seals the next write once another replica set encryption up, and writes
// plain again once another disabled it.
func TestReplicasSeeEncryptionChangedOnAnother(t *testing.T) {
	vars := withPostgres(t, map[string]string{"FILESHED_STORAGE_BASE_PATH": t.TempDir(), "FILESHED_ENCRYPTION_MASTER_KEY": masterKey})
	a, b := replicaOf(t, vars), replicaOf(t, vars)
	create := func(e *env, name, content string) {
		t.Helper()
		wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": name, "content": content}, nil))
	}
	create(b, "before.txt", "plain before setup") // b now knows the user without a key
	wantOK(t, a.post("shed_encryption", map[string]any{"action": "setup"}, nil))
	create(b, "after.txt", "secret after setup")
	b.sealedOnDisk(zoneDir+"after.txt", "secret after setup")
	if r := b.post("shed_read", map[string]any{"zone": "storage", "path": "after.txt"}, nil); r.Data["content"] != "secret after setup" {
		t.Fatalf("read on the replica that sealed it: %s", r.raw)
	}
	wantOK(t, a.post("shed_encryption", map[string]any{"action": "disable", "confirm": true}, nil))
	create(b, "plain.txt", "plain after disable")
	if got := b.disk("plain.txt"); got != "plain after disable" {
		t.Fatalf("a write after disable on another replica is not plain: %q", got)
	}
}
