package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/internal/coretest"
)

// TestSQLiteWriteBehindSlowStatementIsTimeout (issue 24 finding 11): a shed_sqlite write
// that waits behind a slow statement on the same database for longer than its own time
// reaches the quota with its deadline passed. That is a timeout, not "INTERNAL_ERROR
// Cannot read the quota: context deadline exceeded". The slow statement is played by the
// file's write lock held past the call's deadline (exec_timeout_default = 1 s).
func TestSQLiteWriteBehindSlowStatementIsTimeout(t *testing.T) {
	k, _ := coretest.Service(t, map[string]string{"FILESHED_EXEC_TIMEOUT_DEFAULT": "1"})
	s := New(k.Kernel())
	ctx := context.Background()
	c := core.Caller{UserID: "local", ConvID: "c1"}
	in := SQLiteInput{ZoneArgs: core.ZoneArgs{Zone: "storage"}, Path: "ledger.db", Query: "CREATE TABLE t (x)"}
	if _, err := s.SQLite(ctx, c, in); err != nil {
		t.Fatal(err)
	}
	z, err := s.ResolveZone(ctx, c, "storage", "", true)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	unlock, err := k.LockPath(ctx, z, "ledger.db") // the slow statement holds the database's writers
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		in.Query = "INSERT INTO t VALUES (1)"
		_, err := s.SQLite(ctx, c, in)
		done <- err
	}()
	time.Sleep(1500 * time.Millisecond)
	unlock()
	err = <-done
	e, ok := core.AsError(err)
	if !ok || e.Code != core.Timeout {
		t.Fatalf("want TIMEOUT, got %v", err)
	}
	if e.Hint == "" {
		t.Fatalf("TIMEOUT without a hint: %v", e)
	}
}
