package handlers_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// killLockSessions ends every lock session of the server's PostgreSQL state (a database
// restart, a network cut): every lease held then is lost, and its holder learns it within
// the Locker's check interval (1 s).
func killLockSessions(t *testing.T, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'fileshed-locks' AND datname = current_database()`); err != nil {
		t.Fatal(err)
	}
}

// TestExecCommitStopsOnLostLock (issue 25): a writing command in Documents holds the space's
// turn across its run and the gate and repository for its commit; when the PostgreSQL
// session holding them dies, another replica may hold them, and the command's commit must
// not run: LOCK_ERROR ("written but not committed"), as a write transaction answers, and
// the change stays out of the history (shed_maintenance commits it later).
func TestExecCommitStopsOnLostLock(t *testing.T) {
	t.Parallel()
	e := start(t, withPostgres(t, nil))
	e.write("users/local/Documents/data/a.txt", "v1")
	wantOK(t, e.post("shed_maintenance", nil, nil)) // the repository, with a.txt
	db := stateDB(t, e)
	done := make(chan reply, 1)
	go func() {
		done <- e.post("shed_exec", map[string]any{"zone": "documents", "cmd": "sleep", "args": []string{"3"}}, nil)
	}()
	waitRunning(t, filepath.Join(e.base, "users/local/Documents/data")) // the command runs
	e.write("users/local/Documents/data/late.txt", "written while the command ran")
	killLockSessions(t, db)
	r := <-done
	wantError(t, r, "LOCK_ERROR")
	if h := history(t, e, "late.txt"); len(h) != 0 {
		t.Fatalf("late.txt committed after the command's lock was lost: %v", h)
	}
}

// TestMaintenanceStopsOnLostLock (issue 25): shed_maintenance releases an expired locked edit
// and removes its working copy holding the edit's key; when the PostgreSQL session holding
// the key dies meanwhile (here while the release waits on the locks table), another
// replica's step may hold it, and the working copy must stay: LOCK_ERROR.
func TestMaintenanceStopsOnLostLock(t *testing.T) {
	e := start(t, withPostgres(t, map[string]string{"FILESHED_LOCK_MAX_AGE_HOURS": "2"}))
	e.write("users/local/Storage/data/b.txt", "v1")
	a := conv("chat-a")
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "b.txt"}, a))
	backdate(t, e, "b.txt", 3*time.Hour)
	db := stateDB(t, e)
	row, err := db.Begin() // holds the lock's row: maintenance's release waits for it
	if err != nil {
		t.Fatal(err)
	}
	if _, err := row.Exec(`SELECT 1 FROM locks WHERE path = 'b.txt' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	done := make(chan reply, 1)
	go func() { done <- e.post("shed_maintenance", nil, a) }()
	time.Sleep(500 * time.Millisecond) // maintenance holds the edit's key and waits on the row
	killLockSessions(t, db)
	time.Sleep(2500 * time.Millisecond) // the lease's check finds its session gone
	if err := row.Rollback(); err != nil {
		t.Fatal(err)
	}
	wantError(t, <-done, "LOCK_ERROR")
	if !exists(e, "users/local/Storage/editzone/chat-a/b.txt") {
		t.Fatal("the working copy was removed after the edit's lock was lost")
	}
}

// TestGroupCommandKeepsItsOwnerOnLostLock: a member's command in a group zone gives the
// files it creates an owner (with group_default_mode owner) after its commit. When the commit was
// refused because the PostgreSQL session of its locks died (LOCK_ERROR), the files stayed
// on disk without a record: open to every member, who could delete or replace them. They
// are now recorded before the commit, from the disk.
func TestGroupCommandKeepsItsOwnerOnLostLock(t *testing.T) {
	t.Parallel()
	g := startGroups(t, withPostgres(t, map[string]string{"FILESHED_GROUP_DEFAULT_MODE": "owner"}))
	g.create("alice", "seed.md", "x\n", "owner")
	done := make(chan reply, 1)
	go func() {
		done <- g.as("alice", "shed_exec", in(slowSQLite("new.db", 15_000_000, "CREATE TABLE t(b);")))
	}()
	waitRunning(t, g.teamDir())
	killLockSessions(t, stateDB(t, g.env))
	wantError(t, <-done, "LOCK_ERROR")
	if _, ok := g.file("new.db"); !ok {
		t.Fatal("the command's file is gone")
	}
	wantError(t, g.as("bob", "shed_delete", in(map[string]any{"path": "new.db"})), "PERMISSION_DENIED")
}
