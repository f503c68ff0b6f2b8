package pgtest

import (
	"context"
	"strconv"
	"syscall"
	"testing"
)

// Crashable is a private server of one test's own, which the test may crash: for what
// must survive a crash of the database server. Unlike the shared server it writes its
// WAL to the operating system on every flush (fsync stays off: a process crash, unlike a
// host's, keeps what was written), and it defers the WAL writer's background flush by 10 s,
// so a commit that did not wait for its flush (synchronous_commit=off) is lost in a crash
// within that time, as on a busy production server.
type Crashable struct {
	s *server
}

// NewCrashable starts a Crashable server for t, stopped and removed when t ends. It skips t
// when PostgreSQL is not installed.
func NewCrashable(t testing.TB) *Crashable {
	t.Helper()
	s, skip, err := startWith([]string{"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "wal_writer_delay=10000", "-c", "wal_writer_flush_after=1GB"})
	if skip != "" {
		t.Skip(skip)
	}
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return &Crashable{s: s}
}

// URL returns the URL of a new, empty database on the server.
func (c *Crashable) URL(t testing.TB) string {
	t.Helper()
	name := "crash_" + strconv.FormatInt(dbSeq.Add(1), 10)
	if _, err := c.s.admin.ExecContext(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	return c.s.url(name)
}

// Crash stops the server as `pg_ctl -m immediate` does (SIGQUIT to the postmaster: every
// process exits at once, nothing is flushed, no shutdown checkpoint) and starts it again on
// the same data and socket, returning once its crash recovery is done and it answers.
func (c *Crashable) Crash(t testing.TB) {
	t.Helper()
	if err := c.s.halt(syscall.SIGQUIT); err != nil {
		t.Fatalf("pgtest: crash: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := c.s.launch(ctx); err != nil {
		t.Fatalf("pgtest: start after the crash: %v", err)
	}
}
