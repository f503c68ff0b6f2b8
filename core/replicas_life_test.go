package core

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/internal/pgtest"
)

// fastReplicas shortens the replicas' beat for one test.
func fastReplicas(t *testing.T) {
	beat, quiet := replicaBeat, replicaQuiet
	replicaBeat, replicaQuiet = 50*time.Millisecond, 300*time.Millisecond
	t.Cleanup(func() { replicaBeat, replicaQuiet = beat, quiet })
}

// tempOf is a temporary name of replica id ("" for the older form without one).
func tempOf(id string) string {
	if id == "" {
		return ".fileshed-tmp-" + rand.Text()
	}
	return ".fileshed-tmp-" + id + "-" + rand.Text()
}

// eventually waits up to 10 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 10 s", what)
		}
	}
}

// TestReplicaSweepsOnlyTheDead (issue 25: a restarted replica's start-up sweep deleted the
// others' writes in flight): among replicas the leader removes the temporary names of a
// dead replica (silent, its liveness lock free) and of no live one, the older form only
// past the hard bound, and measures again the usage of exactly the owners the dead one
// wrote for (its unsettled reservation); then it forgets it.
func TestReplicaSweepsOnlyTheDead(t *testing.T) {
	fastReplicas(t)
	base, url := t.TempDir(), pgtest.URL(t)
	ctx := context.Background()
	other, err := store.OpenSource(store.Source{Driver: store.Postgres, URL: url}) // the other replicas' side
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
	ann, bob := store.Owner{Kind: "user", ID: "ann"}, store.Owner{Kind: "user", ID: "bob"}
	for _, r := range []struct {
		id    string
		owner store.Owner
	}{{live, ann}, {dead, ann}, {dead, bob}} {
		if _, err := other.Heartbeat(ctx, store.Replica{ID: r.id, Host: "h"}); err != nil {
			t.Fatal(err)
		}
		if err := other.NoteWriter(ctx, r.id, r.owner); err != nil {
			t.Fatal(err)
		}
	}
	storage := filepath.Join(base, "users", "ann", "Storage", "data")
	if err := os.MkdirAll(filepath.Join(storage, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{ // what → its name in Storage
		"live write": tempOf(live), "dead write": "d/" + tempOf(dead), "dead staging folder": tempOf(dead),
		"older form": tempOf(""), "older form past the bound": tempOf(""), "user's file": ".fileshed-tmp-notes",
		"live write past the bound": tempOf(live),
	}
	for what, name := range names {
		p := filepath.Join(storage, name)
		if what == "dead staging folder" {
			err = os.MkdirAll(filepath.Join(p, "x"), 0o700)
		} else {
			err = os.WriteFile(p, []byte("0123456789"), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-25 * time.Hour)
	for _, what := range []string{"older form past the bound", "live write past the bound"} {
		if err := os.Chtimes(filepath.Join(storage, names[what]), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.SetUsage(ctx, bob, Amount{Bytes: 5000, Files: 1}); err != nil { // a reservation the dead one never settled
		t.Fatal(err)
	}

	s, err := serverOn(t, base, postgresState(url))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the dead replica forgotten", func() bool {
		owners, err := other.WrittenBy(ctx, dead)
		return err == nil && len(owners) == 0
	})
	for what, name := range names {
		_, err := os.Lstat(filepath.Join(storage, name))
		want := what == "live write" || what == "older form" || what == "user's file"
		if gone := err != nil; gone == want {
			t.Errorf("%s: kept %v, want %v", what, !gone, want)
		}
	}
	if used, err := other.Usage(ctx, bob); err != nil || used != (Amount{}) {
		t.Errorf("bob's usage after the dead replica: %+v, %v; want none (bob has no file)", used, err)
	}
	list, _ := other.Replicas(ctx)
	var ids []string
	for _, r := range list {
		ids = append(ids, r.ID)
	}
	if !slices.Contains(ids, live) || slices.Contains(ids, dead) || !slices.Contains(ids, confine.Replica()) {
		t.Errorf("replicas after the cleaning: %v", ids)
	}
	if !s.Leading() {
		t.Error("the one server does not lead")
	}
}

// A replica notes in its journal each owner it reserves for, before the reservation; when
// a leader took it for dead and forgot its journal, it notes them again. A clean stop
// forgets its row.
func TestReplicaJournalsItsOwners(t *testing.T) {
	fastReplicas(t)
	base, url := t.TempDir(), pgtest.URL(t)
	ctx := context.Background()
	s, err := serverOn(t, base, postgresState(url))
	if err != nil {
		t.Fatal(err)
	}
	ann := store.Owner{Kind: "user", ID: "ann"}
	reserve := func() {
		t.Helper()
		release, err := s.HoldOwner(ctx, ann, lock.Shared)
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	noted := func() bool {
		owners, err := s.db.WrittenBy(ctx, confine.Replica())
		return err == nil && slices.Equal(owners, []store.Owner{ann})
	}
	reserve()
	if !noted() {
		t.Fatal("a reservation not in the journal")
	}
	if err := s.db.ForgetReplica(ctx, confine.Replica()); err != nil { // another leader took it for dead
		t.Fatal(err)
	}
	eventually(t, "the row back and the journal to write again", func() bool {
		list, err := s.db.Replicas(ctx)
		_, noted := s.cluster.noted.Load(ann)
		return err == nil && len(list) == 1 && !noted
	})
	reserve()
	if !noted() {
		t.Fatal("after being forgotten, a reservation not in the journal")
	}
	s.Close()
	check, err := store.OpenSource(store.Source{Driver: store.Postgres, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	if list, err := check.Replicas(ctx); err != nil || len(list) != 0 {
		t.Fatalf("after a clean stop: %v, %v", list, err)
	}
}

// TestRecountWaitsForAnotherReplicasReservation (issue 25: each server's first-use recount
// erased the others' reservations): a measure of an owner's usage runs under the owner's
// quota lock across replicas, so while one replica has a reservation in flight another's
// recount waits (here until its deadline), and runs once it is settled.
func TestRecountWaitsForAnotherReplicasReservation(t *testing.T) {
	t.Parallel()
	a, b, _, _ := replicaPair(t)
	cara := store.Owner{Kind: "user", ID: "cara"}
	reservation, err := a.HoldOwner(t.Context(), cara, lock.Shared)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	_, _, err = b.Reconcile(ctx, cara)
	cancel()
	if e, ok := AsError(err); !ok || e.Code != Timeout {
		t.Fatalf("a recount beside another replica's reservation: %v", err)
	}
	reservation()
	if _, _, err := b.Reconcile(t.Context(), cara); err != nil {
		t.Fatalf("the recount once the reservation settled: %v", err)
	}
}

// TestCleanStopForgetsItsRowWhileItsLockLingers (issue 34: CI failed "after a clean stop" with
// the row still there): a stop whose session could not unlock — its connection broken by a
// call cut short, so the database ends the backend, and frees its liveness lock, only a
// moment later — still forgets the replica's row. Whether another server of this process
// shares the row is the process's own count, never the database's view of the lock. A
// second server of the process on the same database keeps the row until it stops too.
func TestCleanStopForgetsItsRowWhileItsLockLingers(t *testing.T) {
	fastReplicas(t)
	base, url := t.TempDir(), pgtest.URL(t)
	ctx := context.Background()
	check, err := store.OpenSource(store.Source{Driver: store.Postgres, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	rows := func() int {
		t.Helper()
		list, err := check.Replicas(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	a, err := serverOn(t, base, postgresState(url))
	if err != nil {
		t.Fatal(err)
	}
	b, err := serverOn(t, base, postgresState(url))
	if err != nil {
		t.Fatal(err)
	}
	lingering, err := check.OpenSession(ctx, confine.Replica()) // the backend of a broken session
	if err != nil {
		t.Fatal(err)
	}
	defer lingering.Close()
	a.Close()
	if n := rows(); n != 1 {
		t.Fatalf("one of two servers of the process stopped: %d rows, want 1 (the other's)", n)
	}
	b.Close()
	if n := rows(); n != 0 {
		t.Fatalf("after a clean stop, with the liveness lock still held by a dying backend: %d rows, want 0", n)
	}
}
