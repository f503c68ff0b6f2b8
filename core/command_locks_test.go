package core

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/vcs"
)

// heldNotes is a zone whose notes.txt ("v1\n") conversation "editor" holds in a locked
// edit, with the lock guard of a command of conversation "cmd" (its copies not taken yet).
type heldNotes struct {
	s     *Service
	z     *Zone
	disk  string // the zone's data directory
	guard *lockGuard
}

func holdNotes(t *testing.T, zone string) *heldNotes {
	t.Helper()
	s, base := testService(t, nil)
	ctx := context.Background()
	z, err := s.ResolveZone(ctx, Caller{UserID: "u", ConvID: "editor"}, zone, "", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(z.Close)
	h := &heldNotes{s: s, z: z, disk: filepath.Join(base, "users", "u", map[string]string{"storage": "Storage", "documents": "Documents"}[zone], "data")}
	h.save(t, "v1\n")
	if _, err := s.db.AcquireLock(ctx, store.Lock{ZoneKey: zoneKey(z), Path: "notes.txt", UserID: "u", ConvID: "editor", Since: time.Now()}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if h.guard, err = s.guardLocks(ctx, Caller{UserID: "u", ConvID: "cmd"}, z, nil); err != nil || h.guard == nil {
		t.Fatalf("guard %v, %v", h.guard, err)
	}
	t.Cleanup(h.guard.close)
	return h
}

// save is the holder's write of notes.txt, through the write transaction.
func (h *heldNotes) save(t *testing.T, content string) {
	t.Helper()
	tx, _, err := h.s.BeginWrite(context.Background(), Caller{UserID: "u", ConvID: "editor"}, h.z, "notes.txt", "notes.txt", Edit{Tool: "t", Message: "save"})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if _, err := tx.WriteFile(Write{Size: int64(len(content)), Body: strings.NewReader(content)}); err != nil {
		t.Fatal(err)
	}
}

// start is the command taking its space, as execWrite does before the run.
func (h *heldNotes) start(t *testing.T) *cmdSpace {
	t.Helper()
	sp, err := h.s.holdSpace(context.Background(), h.z, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sp.release)
	if err := sp.locked(context.Background(), func(*vcs.Locked) error { h.guard.follow(sp.start()); return h.guard.take() }); err != nil {
		t.Fatal(err)
	}
	return sp
}

// end is the lock guard after the run; it returns what it put back and notes.txt then.
func (h *heldNotes) end(t *testing.T, sp *cmdSpace) ([]string, string) {
	t.Helper()
	var reverted []string
	if err := sp.locked(context.Background(), func(*vcs.Locked) error {
		defer sp.stop()
		r, err := h.guard.restore(nil)
		for _, e := range r {
			reverted = append(reverted, e.Path)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(h.disk, "notes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return reverted, string(b)
}

// TestGuardKeepsTheHoldersSaveBeside: a file another conversation holds in a locked edit,
// saved by its holder while a command runs, then changed by the command (`tar -x` reaching
// it), is put back as its holder saved it, not as it was before the command: the lock
// guard copies the file again when a write beside the command leaves it (lockGuard.follow).
// The command's change is made on the disk directly, as the program would.
func TestGuardKeepsTheHoldersSaveBeside(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"storage", "documents"} {
		t.Run(zone, func(t *testing.T) {
			h := holdNotes(t, zone)
			sp := h.start(t)
			h.save(t, "saved by its holder\n") // beside the command
			if err := os.WriteFile(filepath.Join(h.disk, "notes.txt"), []byte("the command's\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if reverted, got := h.end(t, sp); len(reverted) != 1 || got != "saved by its holder\n" {
				t.Fatalf("reverted %v, notes.txt = %q: want the holder's save put back", reverted, got)
			}
		})
	}
}

// TestGuardCopiesOnceTheSpaceIsHeld: the lock guard copied the protected files before the
// command waited for its space, so a locked edit saved during that wait (the save held the
// space's turn: the command waited for it) was neither in the copy nor noted beside the
// command, and the guard put the old content back. The copies are now taken with the space
// held.
func TestGuardCopiesOnceTheSpaceIsHeld(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"storage", "documents"} {
		t.Run(zone, func(t *testing.T) {
			h := holdNotes(t, zone)
			h.save(t, "saved while the command waited\n") // before the command holds its space
			if reverted, got := h.end(t, h.start(t)); len(reverted) != 0 || got != "saved while the command waited\n" {
				t.Fatalf("reverted %v, notes.txt = %q: the holder's save is lost", reverted, got)
			}
		})
	}
}
