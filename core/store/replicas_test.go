package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// A replica's row: the first heartbeat adds it, later ones refresh it (database time); the
// journal keeps each owner once; a forgotten replica's next heartbeat adds it again and says
// so (it must note its owners again). On both drivers.
func TestReplicaHeartbeatAndJournal(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		r := Replica{ID: "AAAAAAAAAAAAAAAA", Host: "node-1", PID: 42}
		for i, want := range []bool{true, false} {
			if added, err := d.Heartbeat(ctx, r); err != nil || added != want {
				t.Fatalf("heartbeat %d: added %v, %v; want %v", i+1, added, err, want)
			}
		}
		list, err := d.Replicas(ctx)
		if err != nil || len(list) != 1 || list[0].ID != r.ID || list[0].Host != "node-1" || list[0].PID != 42 ||
			list[0].Seen.Before(list[0].Started) || time.Since(list[0].Seen).Abs() > time.Minute {
			t.Fatalf("replicas: %+v, %v", list, err)
		}
		if silent, err := d.Silent(ctx, time.Hour); err != nil || len(silent) != 0 {
			t.Fatalf("silent for an hour: %v, %v", silent, err)
		}
		time.Sleep(20 * time.Millisecond)
		if silent, err := d.Silent(ctx, 5*time.Millisecond); err != nil || !slices.Equal(silent, []string{r.ID}) {
			t.Fatalf("silent for 5 ms: %v, %v", silent, err)
		}
		for _, o := range []Owner{{"user", "u1"}, {"group", "g1"}, {"user", "u1"}} {
			if err := d.NoteWriter(ctx, r.ID, o); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.NoteWriter(ctx, "BBBBBBBBBBBBBBBB", Owner{"user", "u2"}); err != nil {
			t.Fatal(err)
		}
		if owners, err := d.WrittenBy(ctx, r.ID); err != nil || !slices.Equal(owners, []Owner{{"group", "g1"}, {"user", "u1"}}) {
			t.Fatalf("written by: %v, %v", owners, err)
		}
		if err := d.ForgetReplica(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		if owners, err := d.WrittenBy(ctx, r.ID); err != nil || len(owners) != 0 {
			t.Fatalf("journal after forget: %v, %v", owners, err)
		}
		if owners, err := d.WrittenBy(ctx, "BBBBBBBBBBBBBBBB"); err != nil || len(owners) != 1 {
			t.Fatalf("another replica's journal after forget: %v, %v", owners, err)
		}
		if added, err := d.Heartbeat(ctx, r); err != nil || !added {
			t.Fatalf("heartbeat after forget: added %v, %v", added, err)
		}
		if err := d.NoteWriter(ctx, r.ID, Owner{"nobody", "x"}); err == nil {
			t.Fatal("an owner of no kind was noted")
		}
	})
}

// A replica is alive exactly while a session of its id is open: the sessions hold its
// liveness lock, and closing the last (or its connection dying) frees the lock. One session leads at a time; when it ends another may lead.
func TestReplicaSessionIsItsLife(t *testing.T) {
	t.Parallel()
	src := testSource(t, Postgres)
	d, err := OpenSource(src)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	other, err := OpenSource(src) // another replica's pool
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	const id = "CCCCCCCCCCCCCCCC"
	if alive, err := other.Alive(ctx, id); err != nil || alive {
		t.Fatalf("before its session: alive %v, %v", alive, err)
	}
	s, err := d.OpenSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if alive, err := other.Alive(ctx, id); err != nil || !alive {
		t.Fatalf("with its session: alive %v, %v", alive, err)
	}
	if alive, err := other.Alive(ctx, id); err != nil || !alive {
		t.Fatalf("asked twice (Alive must not keep the lock): alive %v, %v", alive, err)
	}
	// The servers of one process share its id: each holds the lock, and the id lives while
	// one does.
	twin, err := other.OpenSession(ctx, id)
	if err != nil {
		t.Fatalf("a second session of the id: %v", err)
	}
	twin.Close()
	if alive, err := other.Alive(ctx, id); err != nil || !alive {
		t.Fatalf("with one of its two sessions closed: alive %v, %v", alive, err)
	}
	t2, err := other.OpenSession(ctx, "DDDDDDDDDDDDDDDD")
	if err != nil {
		t.Fatal(err)
	}
	defer t2.Close()
	if lead, err := s.Lead(ctx); err != nil || !lead {
		t.Fatalf("first leader: %v, %v", lead, err)
	}
	if lead, err := s.Lead(ctx); err != nil || !lead {
		t.Fatalf("the leader asks again: %v, %v", lead, err)
	}
	if lead, err := t2.Lead(ctx); err != nil || lead {
		t.Fatalf("a second leader: %v, %v", lead, err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if alive, err := other.Alive(ctx, id); err != nil || alive {
		t.Fatalf("after its session closed: alive %v, %v", alive, err)
	}
	// Had Close given the connection back to the pool, its locks would outlive it.
	if lead, err := t2.Lead(ctx); err != nil || !lead {
		t.Fatalf("after the leader's session closed: %v, %v", lead, err)
	}
}

// SQLite has one server: no sessions, and no liveness to ask.
func TestReplicaSessionNeedsPostgres(t *testing.T) {
	t.Parallel()
	d := openTest(t, SQLite)
	if _, err := d.OpenSession(context.Background(), "AAAAAAAAAAAAAAAA"); !errors.Is(err, ErrNoSession) {
		t.Fatalf("OpenSession on SQLite: %v", err)
	}
	if _, err := d.Alive(context.Background(), "AAAAAAAAAAAAAAAA"); !errors.Is(err, ErrNoSession) {
		t.Fatalf("Alive on SQLite: %v", err)
	}
}
