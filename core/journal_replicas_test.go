package core

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The journal is in the state database replicas share: a change made on one replica is
// listed by the other and undone there — in Storage from the image the first kept in the
// user's journal area, in Documents from the commit's parent — and the undo, listed back on
// the first, can be undone there (a redo across replicas). PostgreSQL.
func TestJournalAcrossReplicas(t *testing.T) {
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
		file := filepath.Join(za.Fs.Dir(), "r.txt")
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
