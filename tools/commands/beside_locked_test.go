package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/vcs"
)

// TestGuardKeepsTheHoldersSaveBeside: a file another conversation holds in a locked edit,
// saved by its holder while a command runs, then changed by the command (`tar -x` reaching
// it), is put back as its holder saved it, not as it was before the command: the lock
// guard copies the file again when a write beside the command leaves it (lockGuard.follow).
// The command's changes are made on the disk directly, as the program would.
func TestGuardKeepsTheHoldersSaveBeside(t *testing.T) {
	for _, zone := range []string{"storage", "documents"} {
		t.Run(zone, func(t *testing.T) {
			s, base := testService(t, nil)
			ctx := context.Background()
			editor, other := core.Caller{UserID: "u", ConvID: "editor"}, core.Caller{UserID: "u", ConvID: "cmd"}
			z, err := s.ResolveZone(ctx, editor, zone, "", false)
			if err != nil {
				t.Fatal(err)
			}
			defer z.Close()
			disk := filepath.Join(base, "users", "u", map[string]string{"storage": "Storage", "documents": "Documents"}[zone], "data")
			save := func(content string) {
				tx, _, err := s.BeginWrite(ctx, editor, z, "notes.txt", "notes.txt", core.Edit{Tool: "t", Message: "save"})
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Close()
				if _, err := tx.WriteFile(core.Write{Size: int64(len(content)), Body: strings.NewReader(content)}); err != nil {
					t.Fatal(err)
				}
			}
			save("v1\n")
			if _, err := s.DB().AcquireLock(ctx, store.Lock{ZoneKey: core.ZoneKey(z), Path: "notes.txt", UserID: "u", ConvID: "editor", Since: time.Now()}, time.Hour); err != nil {
				t.Fatal(err)
			}
			guard, err := s.guardLocks(ctx, other, z, nil)
			if err != nil || guard == nil {
				t.Fatalf("guard %v, %v", guard, err)
			}
			defer guard.close()
			sp, err := s.holdSpace(ctx, z, false)
			if err != nil {
				t.Fatal(err)
			}
			defer sp.release()
			if err := sp.locked(ctx, func(*vcs.Locked) error { guard.follow(sp.start()); return nil }); err != nil {
				t.Fatal(err)
			}
			save("saved by its holder\n") // beside the command
			if err := os.WriteFile(filepath.Join(disk, "notes.txt"), []byte("the command's\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			var reverted []string
			if err := sp.locked(ctx, func(*vcs.Locked) error { defer sp.stop(); reverted = guard.restore(); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(reverted) != 1 || reverted[0] != "notes.txt" {
				t.Errorf("reverted %v", reverted)
			}
			if b, err := os.ReadFile(filepath.Join(disk, "notes.txt")); err != nil || string(b) != "saved by its holder\n" {
				t.Fatalf("notes.txt = %q (%v): the holder's save is lost", b, err)
			}
		})
	}
}
