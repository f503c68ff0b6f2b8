package core

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/internal/pgtest"
)

// The journal is in the state database replicas share: a change made on one replica is
// listed by the other and undone there — in Storage from the image the first kept in the
// user's journal area, in Documents from the commit's parent — and the undo, listed back on
// the first, can be undone there (a redo across replicas). PostgreSQL.
func TestJournalAcrossReplicas(t *testing.T) {
	t.Parallel()
	a, b, _, _ := replicaPair(t)
	ctx := context.Background()
	c := Caller{UserID: "alice", ConvID: "conv1"}
	for _, zone := range []string{"storage", "documents"} {
		za := zoneOf(t, a, c, zone)
		txWrite(t, a, c, za, "r.txt", "one\n")
		txWrite(t, a, c, za, "r.txt", "two\n")
		changes, _, err := b.Changes(ctx, c, ChangesQuery{Zone: zone})
		must(t, err)
		if len(changes) != 2 || changes[0].Op != "write" || !changes[0].Undoable {
			t.Fatalf("%s on the other replica: %+v", zone, changes)
		}
		_, err = b.Undo(ctx, c, changes[0].ID, "", false)
		must(t, err)
		file := filepath.Join(za.fs.Dir(), "r.txt")
		if got, _ := os.ReadFile(file); string(got) != "one\n" {
			t.Fatalf("%s after the undo on the other replica: %q", zone, got)
		}
		back, _, err := a.Changes(ctx, c, ChangesQuery{Zone: zone, Limit: 1})
		must(t, err)
		if back[0].Tool != "shed_undo" {
			t.Fatalf("%s: the undo as the first replica lists it: %+v", zone, back[0])
		}
		_, err = a.Undo(ctx, c, back[0].ID, "", false)
		must(t, err)
		if got, _ := os.ReadFile(file); string(got) != "two\n" {
			t.Fatalf("%s after the redo: %q", zone, got)
		}
	}
}

// TestLeaderSettlesADeadReplicasJournal: a replica killed between its changes' pending rows
// and their settlement leaves them pending; the leader settles them from the disk once it
// takes the replica for dead: a change that happened (its file there, absent before) is
// settled with what is there now, one that never ran is dropped, and a live replica's
// pending row is left alone (its change may be running). PostgreSQL.
func TestLeaderSettlesADeadReplicasJournal(t *testing.T) {
	fastReplicas(t)
	base, url := t.TempDir(), pgtest.URL(t)
	ctx := context.Background()
	other, err := store.OpenSource(store.Source{Driver: store.Postgres, URL: url}) // the other replicas' side
	must(t, err)
	defer other.Close()
	const live, dead = "LLLLLLLLLLLLLLLL", "DDDDDDDDDDDDDDDD"
	session, err := other.OpenSession(ctx, live)
	must(t, err)
	defer session.Close()
	ann := store.Owner{Kind: "user", ID: "ann"}
	for _, id := range []string{live, dead} {
		_, err := other.Heartbeat(ctx, store.Replica{ID: id, Host: "h"})
		must(t, err)
		must(t, other.NoteWriter(ctx, id, ann))
	}
	storage := filepath.Join(base, "users", "ann", "Storage", "data")
	must(t, os.MkdirAll(storage, 0o700))
	must(t, os.WriteFile(filepath.Join(storage, "happened.txt"), []byte("written before the kill"), 0o600))
	row := func(replica, batch, p string) store.JournalEntry {
		return store.JournalEntry{Batch: batch, Pending: true, Replica: replica, At: time.Now(), UserID: "ann", ConvID: "c",
			Tool: "shed_create_file", Owner: ann, Zone: "storage", Path: p, Op: "create", BytesBefore: -1, BytesAfter: -1,
			LinesAdded: -1, LinesRemoved: -1}
	}
	happened, never := row(dead, "dead-batch", "happened.txt"), row(dead, "dead-batch", "never.txt")
	never.N = 1
	must(t, other.JournalBegin(ctx, []store.JournalEntry{happened, never}))
	must(t, other.JournalBegin(ctx, []store.JournalEntry{row(live, "live-batch", "live.txt")}))

	s, err := serverOn(t, base, postgresState(url))
	must(t, err)
	eventually(t, "the dead replica forgotten", func() bool {
		owners, err := other.WrittenBy(ctx, dead)
		return err == nil && len(owners) == 0
	})
	pending, err := other.JournalPending(ctx, "")
	must(t, err)
	if len(pending) != 1 || pending[0].Replica != live || pending[0].Path != "live.txt" {
		t.Errorf("pending after the leader's cleaning: %+v, want the live replica's row only", pending)
	}
	settled, err := other.Journal(ctx, store.JournalQuery{UserID: "ann"})
	must(t, err)
	if len(settled) != 1 || settled[0].Path != "happened.txt" || settled[0].Pending ||
		settled[0].BytesAfter != int64(len("written before the kill")) || settled[0].AfterIdent == "" {
		t.Fatalf("settled rows: %+v, want happened.txt's with its size", settled)
	}
	changes, _, err := s.Changes(ctx, Caller{UserID: "ann", ConvID: "c"}, ChangesQuery{})
	must(t, err)
	if len(changes) != 1 || changes[0].Path != "happened.txt" || !changes[0].Undoable {
		t.Errorf("ann's changes: %+v, want happened.txt's creation, undoable", changes)
	}
}
