package handlers_test

import (
	"strings"
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

// TestMetricsShowTheLeader: of two replicas on one storage exactly one leads (it runs the
// start-up sweep and the cleaning after dead replicas), and /metrics says which; a server
// with the SQLite state leads nothing.
func TestMetricsShowTheLeader(t *testing.T) {
	vars := withPostgres(t, map[string]string{"FILESHED_STORAGE_BASE_PATH": t.TempDir()})
	a, b := replicaOf(t, vars), replicaOf(t, vars)
	leaders := 0
	for _, e := range []*env{a, b} {
		_, body := scrape(t, e, "")
		if strings.Contains(body, "\nfileshed_replica_leader 1\n") {
			leaders++
		} else if !strings.Contains(body, "\nfileshed_replica_leader 0\n") {
			t.Fatal("/metrics lacks fileshed_replica_leader")
		}
	}
	if leaders != 1 {
		t.Fatalf("%d leaders among 2 replicas", leaders)
	}
	if _, body := scrape(t, start(t, map[string]string{"FILESHED_STATE_DRIVER": "sqlite"}), ""); !strings.Contains(body, "\nfileshed_replica_leader 0\n") {
		t.Fatal("a server with the SQLite state leads")
	}
}

// TestTempNamesOfReplicasAreProtected: a temporary name carrying a replica id is reserved
// like the older form: the sweeps remove such names as leftovers, so no tool may make one
// (nor a folder of one) in any zone.
func TestTempNamesOfReplicasAreProtected(t *testing.T) {
	e := start(t, nil)
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "ok.txt", "content": "x"}, nil))
	for _, name := range []string{".fileshed-tmp-" + strings.Repeat("A", 26), ".fileshed-tmp-ABCDEFGHIJKLMNOP-" + strings.Repeat("Q", 26)} {
		for _, zone := range []string{"storage", "documents"} {
			for _, p := range []string{name, "d/" + name + "/x.txt"} {
				wantError(t, e.post("shed_create_file", map[string]any{"zone": zone, "path": p, "content": "x"}, nil), "PROTECTED_PATH")
			}
		}
		wantError(t, e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "ok.txt", "new_path": name}, nil), "PROTECTED_PATH")
	}
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": ".fileshed-tmp-my-notes", "content": "a user's name"}, nil))
}

// TestWriteBesideACommandOnAnotherReplica (issue 25): a writing command in Documents runs
// without the zone's gate, and the single-file writes beside it are noted for it
// (core/beside.go) — in the process that runs it. A locked edit saved on another replica
// while the command ran was not noted there: the command's lock guard took the saved file
// for its own change of a locked file and put the old content back (the save was lost),
// and the command counted the save's growth again. The write now waits for the command on
// another replica. Storage too (core/plain.go): its writes beside a command were never
// noted, on one server either.
func TestWriteBesideACommandOnAnotherReplica(t *testing.T) {
	t.Parallel() // each case owns its storage, its database and its two servers
	for _, zone := range []string{"documents", "storage"} {
		t.Run(zone, func(t *testing.T) {
			t.Parallel()
			vars := withPostgres(t, map[string]string{"FILESHED_STORAGE_BASE_PATH": t.TempDir()})
			a, b := replicaOf(t, vars), replicaOf(t, vars)
			file := map[string]string{"documents": "users/local/Documents/data/", "storage": execDir}[zone] + "notes.txt"
			a.write(file, "old\n")
			editor := conv("chat-editor")
			wantOK(t, b.post("shed_lockedit_open", map[string]any{"zone": zone, "path": "notes.txt"}, editor))
			wantOK(t, b.post("shed_lockedit_overwrite", map[string]any{"zone": zone, "path": "notes.txt", "content": "saved beside the command\n"}, editor))
			done := make(chan reply, 1)
			go func() {
				done <- a.post("shed_exec", map[string]any{"zone": zone, "cmd": "sleep", "args": []string{"2"}}, conv("chat-cmd"))
			}()
			a.waitMetric("", "fileshed_commands_running 1") // the command runs on a
			wantOK(t, b.post("shed_lockedit_save", map[string]any{"zone": zone, "path": "notes.txt"}, editor))
			r := <-done
			wantOK(t, r)
			if reverted, _ := r.Data["reverted"].([]any); len(reverted) != 0 {
				t.Errorf("the command put back %v", reverted)
			}
			if got := readFile(t, a, file); got != "saved beside the command\n" {
				t.Fatalf("notes.txt after the command: %q (the save on the other replica was lost)", got)
			}
			if used, disk := usage(t, a, "local"), diskUsage(t, a, "local"); used != disk {
				t.Fatalf("recorded usage %d, disk %d", used, disk)
			}
		})
	}
}
