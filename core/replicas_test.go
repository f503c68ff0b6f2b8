package core

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/internal/pgtest"
	"github.com/fileshed/fileshed/internal/testtool"
	"github.com/fileshed/fileshed/internal/testvalves"
)

// TestMain runs four parallel tests at a time (measured: 8.3-9.0 s for the package where
// the two cores' default took 10.9-12.2 s; its tests wait on git, SQLite's fsyncs and the
// database server as much as they compute) and stops the private PostgreSQL server the
// replica tests start (pgtest).
func TestMain(m *testing.M) {
	testtool.ParallelAtLeast(4)
	os.Exit(pgtest.Run(m))
}

// serverOn starts a server on the storage base with the valves vars (FILESHED_*).
func serverOn(t *testing.T, base string, vars map[string]string) (*Service, error) {
	t.Helper()
	cfg := testvalves.Config(t, base, vars)
	s, err := New(cfg, Options{})
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

// postgresState is the valves of a replica on the PostgreSQL database url.
func postgresState(url string) map[string]string {
	return map[string]string{"FILESHED_STATE_DRIVER": "postgres", "FILESHED_STATE_URL": url}
}

// replicaPair starts two replicas on one new storage directory and one database; it returns
// them, the directory and the database URL.
func replicaPair(t *testing.T) (a, b *Service, base, url string) {
	t.Helper()
	base, url = t.TempDir(), pgtest.URL(t)
	a, err := serverOn(t, base, postgresState(url))
	if err != nil {
		t.Fatal(err)
	}
	if b, err = serverOn(t, base, postgresState(url)); err != nil {
		t.Fatalf("a second replica on the storage: %v", err)
	}
	return a, b, base, url
}

// TestReplicasShareOneStorage (issue 25 item 4): servers with the PostgreSQL state share a
// storage directory; a server with the SQLite state is refused beside them, and they beside
// it, each told why; an operator's exclusive work waits for all of them. Once they stopped,
// their storage still refuses the SQLite state: its state is in PostgreSQL.
func TestReplicasShareOneStorage(t *testing.T) {
	t.Parallel()
	a, b, base, url := replicaPair(t)
	if _, err := serverOn(t, base, nil); !errors.Is(err, ErrStorageInUse) || !strings.Contains(err.Error(), "replicas with state.driver: postgres") {
		t.Fatalf("a SQLite server beside replicas: %v", err)
	}
	if _, err := a.AdminReconcile(t.Context(), "user"); !errors.Is(err, ErrServerRunning) {
		t.Fatalf("reconcile beside replicas: %v", err)
	}
	a.Close()
	b.Close()
	// Once they stopped, the storage still keeps its state in PostgreSQL (state_record_test.go).
	if _, err := serverOn(t, base, nil); err == nil || !strings.Contains(err.Error(), "keeps its state in PostgreSQL") {
		t.Fatalf("a SQLite server once the replicas stopped: %v", err)
	}
	one := t.TempDir()
	sq, err := serverOn(t, one, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := serverOn(t, one, postgresState(url)); !errors.Is(err, ErrStorageInUse) || !strings.Contains(err.Error(), "embedded SQLite state serves "+one) {
		t.Fatalf("a replica beside a SQLite server: %v", err)
	}
	sq.Close()
}

// TestReplicasShareTheirLocks: with the PostgreSQL state every lock of the kernel goes
// through the database, so a key one replica holds keeps the other waiting until its
// deadline, and is free for it once released.
func TestReplicasShareTheirLocks(t *testing.T) {
	t.Parallel()
	a, b, _, _ := replicaPair(t)
	k := lock.NewKey(kindFile, "user:alice:storage", "notes.md")
	release, err := a.Hold(t.Context(), k, lock.Exclusive, "a test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	_, err = b.Hold(ctx, k, lock.Exclusive, "another change of notes.md")
	cancel()
	if e, ok := AsError(err); !ok || e.Code != Timeout {
		t.Fatalf("the other replica while one holds the key: %v", err)
	}
	release()
	again, err := b.Hold(t.Context(), k, lock.Exclusive, "another change of notes.md")
	if err != nil {
		t.Fatal(err)
	}
	again()
	if st := a.LockStats(); st.InUse != 0 || st.Idle == 0 {
		t.Fatalf("lock pool of a at rest: %+v", st)
	}
}

// killLockSessions terminates every lock session on the database of url (a database
// restart, a network cut) and waits until le is lost.
func killLockSessions(t *testing.T, url string, le lock.Lease) {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'fileshed-locks' AND datname = current_database()`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-le.Lost():
	case <-time.After(15 * time.Second):
		t.Fatal("the lease was not lost 15 s after its session ended")
	}
}

// TestLostLockStopsTheWrite: when the session holding a write's lock dies, another replica
// may hold the key; the write transaction then refuses to run the change (LOCK_ERROR,
// nothing written) or, lost while the change ran, to commit it.
func TestLostLockStopsTheWrite(t *testing.T) {
	t.Parallel()
	base, url := t.TempDir(), pgtest.URL(t)
	s, err := serverOn(t, base, postgresState(url))
	if err != nil {
		t.Fatal(err)
	}
	c := Caller{UserID: "alice", ConvID: "c"}
	ctx := t.Context()

	z, err := s.ResolveZone(ctx, c, "storage", "", true)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	tx, _, err := s.BeginWrite(ctx, c, z, "a.txt", "a.txt", Edit{Tool: "Write"})
	if err != nil {
		t.Fatal(err)
	}
	killLockSessions(t, url, tx.locks[0])
	_, err = tx.WriteFile(Write{Size: 2, Body: strings.NewReader("hi")})
	tx.Close()
	if e, ok := AsError(err); !ok || e.Code != LockError || !strings.Contains(e.Message, "nothing was changed") {
		t.Fatalf("write after its lock was lost: %v", err)
	}
	if EntryExists(z, "a.txt") {
		t.Fatal("the write ran after its lock was lost")
	}

	d := documents(t, s, "alice")
	defer d.Close()
	tx, _, err = s.BeginWrite(ctx, c, d, "b.txt", "b.txt", Edit{Tool: "Write"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Apply(func() (Change, error) {
		if _, err := d.fs.WriteAtomic("b.txt", strings.NewReader("b\n"), 0o600); err != nil {
			return Change{}, err
		}
		killLockSessions(t, url, tx.locks[0])
		return Change{Paths: []string{"b.txt"}}, nil
	})
	tx.Close()
	if e, ok := AsError(err); !ok || e.Code != LockError || !strings.Contains(e.Message, "not committed") {
		t.Fatalf("commit after the lock was lost: %v", err)
	}
	r, err := s.Repo(d)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if log, err := r.Log("b.txt", 10); err != nil || len(log) != 0 {
		t.Fatalf("b.txt committed after its lock was lost: %d commits, %v", len(log), err)
	}
	if st := s.LockStats(); st.Lost == 0 {
		t.Fatalf("no lost lease counted: %+v", st)
	}
	// The server goes on: the next write takes fresh sessions.
	writeDoc(t, s, "alice", "after\n")
}

// losingLocker is the PostgreSQL Locker of a test whose leases of one kind, taken
// exclusively, are lost as soon as they are granted (every lock session of the database
// killed): what a database restart does to a holder in the middle of its work.
type losingLocker struct {
	lock.Locker
	t    *testing.T
	url  string
	kind string
}

func (l losingLocker) Lock(ctx context.Context, k lock.Key, m lock.Mode) (lock.Lease, error) {
	le, err := l.Locker.Lock(ctx, k, m)
	if err == nil && k.Kind() == l.kind && m == lock.Exclusive {
		killLockSessions(l.t, l.url, le)
	}
	return le, err
}

// TestLostLockKeepsTheRecordedUsage (issue 25): a reconcile (shed_maintenance, the leader's
// cleaning) measures the disk holding the owner's quota lock exclusively; when the session
// holding it dies, another replica's writer may reserve meanwhile, and storing the measure
// would erase that reservation: it answers LOCK_ERROR and keeps the recorded usage.
func TestLostLockKeepsTheRecordedUsage(t *testing.T) {
	t.Parallel()
	base, url := t.TempDir(), pgtest.URL(t)
	s, err := serverOn(t, base, postgresState(url))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	alice := store.Owner{Kind: "user", ID: "alice"}
	recorded := Amount{Bytes: 5000, Files: 3} // a reservation of another replica in flight
	if err := s.db.SetUsage(ctx, alice, recorded); err != nil {
		t.Fatal(err)
	}
	s.locks = losingLocker{Locker: s.locks, t: t, url: url, kind: kindQuota}
	_, _, err = s.Reconcile(ctx, alice)
	if e, ok := AsError(err); !ok || e.Code != LockError {
		t.Fatalf("reconcile after its lock was lost: %v", err)
	}
	if used, err := s.db.Usage(ctx, alice); err != nil || used != recorded {
		t.Fatalf("usage after the lost reconcile: %+v %v, want %+v kept", used, err, recorded)
	}
}
