package core

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/internal/pgtest"
)

// plantCopy leaves a decrypted working copy in dir/start, as a start killed during an
// encrypted command leaves it, and returns the start folder.
func plantCopy(t *testing.T, dir, start string) string {
	t.Helper()
	p := filepath.Join(dir, start)
	if err := os.MkdirAll(filepath.Join(p, "m-"+strings.Repeat("x", 8), "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "m-"+strings.Repeat("x", 8), "data", "plain.txt"), []byte("decrypted"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDecryptedCopiesLiveInTheirStart (issue 32 item 7): decrypted working copies live in a
// private folder of the server's start inside encryption.work_dir; the next start of one
// server removes every older start's (and the older layout's loose copies), and a clean
// stop removes its own.
func TestDecryptedCopiesLiveInTheirStart(t *testing.T) {
	t.Parallel()
	base, work := t.TempDir(), t.TempDir()
	vars := map[string]string{"FILESHED_ENCRYPTION_WORK_DIR": work}
	older := plantCopy(t, work, "run-"+strings.Repeat("O", 16)+"-"+strings.Repeat("r", 8))
	loose := plantCopy(t, work, "m-"+strings.Repeat("L", 16)+"-"+strings.Repeat("r", 8))
	s, err := serverOn(t, base, vars)
	if err != nil {
		t.Fatal(err)
	}
	for what, p := range map[string]string{"an older start's copies": older, "a loose copy": loose} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s survived the start", what)
		}
	}
	m, err := s.WorkTemp()
	if err != nil {
		t.Fatal(err)
	}
	start := filepath.Dir(m)
	fi, err := os.Stat(start)
	if err != nil || filepath.Dir(start) != work || !strings.HasPrefix(filepath.Base(start), "run-"+confine.Replica()+"-") || fi.Mode().Perm() != 0o700 {
		t.Fatalf("a copy's folder %s in %s (%v, %v)", m, start, fi, err)
	}
	s.Close()
	if _, err := os.Lstat(start); err == nil {
		t.Error("a clean stop left its start's folder")
	}
}

// TestReplicaRemovesADeadReplicasCopies (issue 32 item 7): a replica killed during an
// encrypted command and restarted at once (its work_dir a container's emptyDir, which only
// it sees) finds the dead start's decrypted copy; it removes it once that replica is dead
// (silent and its liveness lock free) — without being the leader, and without waiting for
// its own next restart — and keeps a live replica's.
func TestReplicaRemovesADeadReplicasCopies(t *testing.T) {
	fastReplicas(t)
	base, url := t.TempDir(), pgtest.URL(t)
	ctx := context.Background()
	leader, err := serverOn(t, base, postgresState(url)) // the leader, with its own work_dir
	if err != nil {
		t.Fatal(err)
	}
	other, err := store.OpenSource(store.Source{Driver: store.Postgres, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	const live, dead = "LLLLLLLLLLLLLLLL", "DDDDDDDDDDDDDDDD"
	session, err := other.OpenSession(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	for _, id := range []string{live, dead} { // the dead one was killed a moment ago: its row is fresh
		if _, err := other.Heartbeat(ctx, store.Replica{ID: id, Host: "h"}); err != nil {
			t.Fatal(err)
		}
	}
	work := t.TempDir()
	deadCopy := plantCopy(t, work, "run-"+dead+"-"+strings.Repeat("r", 8))
	liveCopy := plantCopy(t, work, "run-"+live+"-"+strings.Repeat("r", 8))
	vars := postgresState(url)
	vars["FILESHED_ENCRYPTION_WORK_DIR"] = work
	if _, err := serverOn(t, base, vars); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the dead replica's decrypted copy removed", func() bool {
		_, err := os.Lstat(deadCopy)
		return os.IsNotExist(err)
	})
	if _, err := os.Lstat(liveCopy); err != nil {
		t.Errorf("a live replica's copy: %v", err)
	}
	if !leader.Leading() {
		t.Error("the first replica does not lead")
	}
}
