package archives

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/archive"
	"github.com/fileshed/fileshed/core/archive/ziptest"
	"github.com/fileshed/fileshed/internal/coretest"
)

// TestUnzipOverwriteChecksEachLockAtItsRename (issue 32 item 10): shed_unzip overwrite=true
// checks each file it replaces against locked edits at that file's own rename, not once
// at its start. Deterministically, the extraction's transaction begins (the check at start
// passes), then another conversation locks a file the archive replaces — one that existed
// at the start, or one it created meanwhile — then the extraction runs: FILE_LOCKED, the
// locked file keeps its content and nothing of the archive is left in the zone. Before,
// the file was replaced under the other conversation's locked edit.
func TestUnzipOverwriteChecksEachLockAtItsRename(t *testing.T) {
	k, _ := coretest.Service(t, nil)
	s := New(k.Kernel())
	ctx := context.Background()
	zipFile := filepath.Join(t.TempDir(), "x.zip")
	f, err := os.Create(zipFile)
	must(t, err)
	must(t, ziptest.Build(f, ziptest.Entry{Name: "a.txt", Body: "from the zip"}, ziptest.Entry{Name: "b.txt", Body: "new"}))
	must(t, f.Close())
	cases := []struct {
		name, zone   string
		existed      bool   // a.txt exists (content "theirs") when the extraction checks its destination
		locked       string // the file locked after Begin (created "theirs" then if missing)
		lockedBy     string // by this conversation
		wantErr      core.Code
		wantA, wantB string
	}{
		{"storage: existed, locked meanwhile", "storage", true, "a.txt", "other", core.FileLocked, "theirs", ""},
		{"storage: created and locked meanwhile", "storage", false, "a.txt", "other", core.FileLocked, "theirs", ""},
		{"documents: created and locked meanwhile", "documents", false, "a.txt", "other", core.FileLocked, "theirs", ""},
		// The locked file comes after one the archive replaces: nothing is replaced either.
		{"storage: second file created and locked meanwhile", "storage", true, "b.txt", "other", core.FileLocked, "theirs", "theirs"},
		{"storage: locked by the same conversation", "storage", true, "a.txt", "mine", "", "from the zip", "new"},
		{"storage: not locked", "storage", false, "", "", "", "from the zip", "new"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			user := string(rune('a' + i))
			me, err := core.NewCaller(user, "", "", "", "mine", nil, "")
			must(t, err)
			z, err := s.ResolveZone(ctx, me, tc.zone, "", true)
			must(t, err)
			defer z.Close()
			a := filepath.Join(z.Fs().Dir(), "a.txt")
			if tc.existed {
				must(t, os.WriteFile(a, []byte("theirs"), 0o600))
			}
			zf, err := os.Open(zipFile)
			must(t, err)
			defer zf.Close()
			fi, err := zf.Stat()
			must(t, err)
			ar, err := archive.Open(zf, fi.Size(), s.archiveLimits(), unzipExclude(z))
			must(t, err)
			replacing, err := checkUnzipDest(z, ar, "", true)
			must(t, err)
			tx, err := s.Begin(ctx, me, core.Edit{Tool: "Unzip", Steps: unzipSteps(z, ar, "", ".", replacing), Quota: unzipQuota(ar)})
			must(t, err)
			defer tx.Close()
			// Meanwhile: the file is (created and) locked by a conversation.
			if locked := filepath.Join(z.Fs().Dir(), tc.locked); tc.locked != "" {
				if _, err := os.Stat(locked); os.IsNotExist(err) {
					must(t, os.WriteFile(locked, []byte("theirs"), 0o600))
				}
				must(t, s.EditLocks(z).Acquire(ctx, core.Caller{UserID: user, ConvID: tc.lockedBy}, tc.locked))
			}
			_, _, err = s.extract(ctx, me, tx, z, ar, "", true)
			if e, _ := core.AsError(err); (tc.wantErr == "") != (err == nil) || err != nil && (e == nil || e.Code != tc.wantErr) {
				t.Fatalf("extract: %v, want %q", err, tc.wantErr)
			}
			if b, _ := os.ReadFile(a); string(b) != tc.wantA {
				t.Errorf("a.txt = %q, want %q", b, tc.wantA)
			}
			if b, _ := os.ReadFile(filepath.Join(z.Fs().Dir(), "b.txt")); string(b) != tc.wantB {
				t.Errorf("b.txt = %q, want %q", b, tc.wantB)
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
