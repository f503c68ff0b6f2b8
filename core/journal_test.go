package core

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// journalFixture is a service with a static group "team" of alice and bob.
func journalFixture(t *testing.T) *Service {
	t.Helper()
	s, _ := testService(t, map[string]string{"FILESHED_GROUPS_STATIC": `{"team":["alice","bob"]}`})
	return s
}

// zoneOf opens zone ("storage", "documents", "group") for c, writable.
func zoneOf(t *testing.T, s *Service, c Caller, zone string) *Zone {
	t.Helper()
	z, err := s.ResolveZone(context.Background(), c, zone, map[string]string{"group": "team"}[zone], true)
	must(t, err)
	t.Cleanup(z.Close)
	return z
}

// txWrite writes content to p of z through the transaction.
func txWrite(t *testing.T, s *Service, c Caller, z *Zone, p, content string) {
	t.Helper()
	tx, _, err := s.BeginWrite(context.Background(), c, z, p, p, Edit{Tool: "Patch", Mode: "group"})
	must(t, err)
	defer tx.Close()
	_, err = tx.WriteFile(Write{Size: int64(len(content)), Body: strings.NewReader(content)})
	must(t, err)
}

// txRemove removes p of z through the transaction.
func txRemove(t *testing.T, s *Service, c Caller, z *Zone, p string) {
	t.Helper()
	must(t, s.undoRemove(context.Background(), c, z, p, nil))
}

// txRename renames from to to in z through the transaction.
func txRename(t *testing.T, s *Service, c Caller, z *Zone, from, to string) {
	t.Helper()
	must(t, s.undoMove(context.Background(), c, z, from, to, nil))
}

// state is what the zone holds: path → content ("<dir>" for a folder).
func state(t *testing.T, z *Zone) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := z.fs.Dir()
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if fi.IsDir() {
			out[rel] = "<dir>"
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	must(t, err)
	return out
}

// plainState is state read through the zone (decrypted).
func sameState(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
}

// Each kind of change in each kind of zone is journaled with its op, sizes and lines, and
// undone one by one newest first, the zone coming back through every state it went
// through; the undo of an undo redoes it. Storage's images are in the journal area,
// versioned zones' are their commits' parents.
func TestJournalUndoAcrossZones(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"storage", "documents", "group"} {
		t.Run(zone, func(t *testing.T) {
			s := journalFixture(t)
			ctx := context.Background()
			c := Caller{UserID: "alice", ConvID: "conv1"}
			z := zoneOf(t, s, c, zone)
			var states []map[string]string
			step := func(f func()) {
				states = append(states, state(t, z))
				f()
			}
			step(func() { txWrite(t, s, c, z, "a.txt", "one\n") })
			step(func() { txWrite(t, s, c, z, "a.txt", "one\ntwo\nthree\n") })
			step(func() { txRename(t, s, c, z, "a.txt", "b.txt") })
			step(func() { txWrite(t, s, c, z, "d/x.txt", "x\n"); txWrite(t, s, c, z, "d/e/y.txt", "y\n") })
			step(func() { txRemove(t, s, c, z, "d") })
			step(func() { txRemove(t, s, c, z, "b.txt") })
			final := state(t, z)
			changes, next, err := s.Changes(ctx, c, ChangesQuery{})
			must(t, err)
			if len(changes) != 7 || next != 0 {
				t.Fatalf("%d changes (next %d): %+v", len(changes), next, changes)
			}
			ops := []string{}
			for _, ch := range changes {
				ops = append(ops, ch.Op+" "+ch.Path)
				if !ch.Undoable || !ch.This {
					t.Fatalf("change %+v", ch)
				}
			}
			if got := strings.Join(ops, ","); got != "delete b.txt,delete d,create d/e/y.txt,create d/x.txt,rename b.txt,write a.txt,create a.txt" {
				t.Fatalf("ops: %s", got)
			}
			if w := changes[5]; w.LinesAdded != 2 || w.LinesRemoved != 0 || w.BytesBefore != 4 || w.BytesAfter != 14 {
				t.Fatalf("the write: %+v", w)
			}
			if zone != "storage" && changes[0].Commit == "" {
				t.Fatalf("no commit: %+v", changes[0])
			}
			// Undo newest first: the zone goes back through each state. The two writes of
			// step 4 are two changes, undone one by one.
			undo := func(id int64) {
				t.Helper()
				if _, err := s.Undo(ctx, c, id, "", false); err != nil {
					t.Fatalf("undo %d: %v", id, err)
				}
			}
			undo(changes[0].ID)
			sameState(t, "after undoing the delete", state(t, z), states[5])
			undo(changes[1].ID)
			sameState(t, "after undoing the folder's delete", state(t, z), states[4])
			undo(changes[2].ID)
			undo(changes[3].ID)
			undo(changes[4].ID)
			sameState(t, "after undoing the rename", state(t, z), states[2])
			undo(changes[5].ID)
			sameState(t, "after undoing the write", state(t, z), states[1])
			undo(changes[6].ID)
			sameState(t, "after undoing the creation", state(t, z), states[0])
			// The undo of the creation, undone: a redo.
			after, _, err := s.Changes(ctx, c, ChangesQuery{Limit: 1})
			must(t, err)
			if after[0].Tool != "shed_undo" || after[0].Op != "delete" {
				t.Fatalf("the undo's own change: %+v", after[0])
			}
			undo(after[0].ID)
			sameState(t, "after the redo", state(t, z), states[1])
			if _, err := s.Undo(ctx, c, changes[6].ID, "", false); err == nil {
				t.Fatal("a change undone twice")
			}
			_ = final
		})
	}
}

// A server killed between a change's pending row and its settlement: after a restart the
// row of a change that happened is settled (listed, undoable), the row of a change that
// never ran is gone (never a row without its change, never a change without its row).
func TestJournalRecoversKilledChanges(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	cfgVars := map[string]string{}
	s, err := serverOn(t, base, cfgVars)
	must(t, err)
	ctx := context.Background()
	c := Caller{UserID: "alice", ConvID: "conv1"}
	for _, zone := range []string{"storage", "documents"} {
		z := zoneOf(t, s, c, zone)
		txWrite(t, s, c, z, "a.txt", "v1\n")
		// Killed after its change: the pending row, then the file written, no settlement.
		tx, _, err := s.BeginWrite(ctx, c, z, "a.txt", "a.txt", Edit{Tool: "Patch"})
		must(t, err)
		j := s.journalTx(tx)
		must(t, j.begin())
		_, err = z.fs.WriteAtomic("a.txt", strings.NewReader("v2, the killed write\n"), 0o600)
		must(t, err)
		tx.Close()
		// Killed before its change: the pending row only.
		tx, _, err = s.BeginWrite(ctx, c, z, "b.txt", "b.txt", Edit{Tool: "Patch"})
		must(t, err)
		must(t, s.journalTx(tx).begin())
		tx.Close()
	}
	if p, err := s.db.JournalPending(ctx, ""); err != nil || len(p) != 4 {
		t.Fatalf("pending before the restart: %d, %v", len(p), err)
	}
	s.Close()
	s, err = serverOn(t, base, cfgVars)
	must(t, err)
	if p, err := s.db.JournalPending(ctx, ""); err != nil || len(p) != 0 {
		t.Fatalf("pending after the restart: %+v, %v", p, err)
	}
	changes, _, err := s.Changes(ctx, c, ChangesQuery{})
	must(t, err)
	var got []string
	for _, ch := range changes {
		got = append(got, ch.Zone+" "+ch.Op+" "+ch.Path)
	}
	if strings.Join(got, ",") != "documents write a.txt,documents create a.txt,storage write a.txt,storage create a.txt" {
		t.Fatalf("after the restart: %v", got)
	}
	// Storage's recovered change is undoable (its image was kept before the change); the
	// versioned one's commit is the recovery's, which the row cannot name.
	storageWrite := changes[2]
	if !storageWrite.Undoable || changes[0].Undoable {
		t.Fatalf("recovered rows: %+v / %+v", storageWrite, changes[0])
	}
	if e, _, err := s.db.JournalByID(ctx, storageWrite.ID); err != nil || !strings.HasPrefix(e.Image, imageInline) {
		t.Fatalf("the recovered row's image: %q, %v; want the one its pending row held inline", e.Image, err)
	}
	_, err = s.Undo(ctx, c, storageWrite.ID, "", false)
	must(t, err)
	z := zoneOf(t, s, c, "storage")
	if b, err := os.ReadFile(filepath.Join(z.fs.Dir(), "a.txt")); err != nil || string(b) != "v1\n" {
		t.Fatalf("after undoing the recovered change: %q, %v", b, err)
	}
}
