package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/archive/ziptest"
	"github.com/fileshed/fileshed/core/confine"
)

// TestUnzipSrcZoneCannotNameAnotherUser: src_zone is one of the caller's zones; neither it
// nor src can reach another user's uploads.
func TestUnzipSrcZoneCannotNameAnotherUser(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.zipAt("users/bob/Uploads/unknown/secret.zip", zipOf(ziptest.Entry{Name: "secret.txt", Body: "bob's"}))
	for _, tc := range []struct {
		name string
		args map[string]any
		code string
	}{
		{"src_zone as a path", map[string]any{"src_zone": "users/bob/Uploads", "src": "secret.zip"}, "ZONE_FORBIDDEN"},
		{"src_zone as a user", map[string]any{"src_zone": "bob", "src": "secret.zip"}, "ZONE_FORBIDDEN"},
		{"src climbing out", map[string]any{"src_zone": "uploads", "src": "../../../bob/Uploads/unknown/secret.zip"}, "PATH_ESCAPE"},
		{"absolute src", map[string]any{"src_zone": "uploads", "src": "/users/bob/Uploads/unknown/secret.zip"}, "PATH_ESCAPE"},
		{"own uploads lack it", map[string]any{"src_zone": "uploads", "src": "secret.zip"}, "FILE_NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["zone"] = "storage"
			wantError(t, e.post("shed_unzip", tc.args, nil), tc.code)
		})
	}
	if _, err := os.Stat(filepath.Join(e.base, storageDir, "secret.txt")); err == nil {
		t.Fatal("another user's archive was extracted")
	}
}

// TestUnzipFullQuotaLeavesZoneUnchanged: an archive that does not fit the quota is refused
// before anything is written; the zone and the usage are as before.
func TestUnzipFullQuotaLeavesZoneUnchanged(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "2"})
	e.write(storageDir+"/old.txt", "old")
	e.zipAt(storageDir+"/big.zip", zipOf(
		ziptest.Entry{Name: "a.bin", Body: ziptest.Noise(1 << 20)},
		ziptest.Entry{Name: "b.bin", Body: ziptest.Noise(1 << 20)},
	))
	before, used := snapshot(t, e.base+"/users/local/Storage"), e.used(t)
	r := e.post("shed_unzip", map[string]any{"zone": "storage", "src": "big.zip", "dest": "x"}, nil)
	wantError(t, r, "QUOTA_EXCEEDED")
	if after := snapshot(t, e.base+"/users/local/Storage"); after != before || e.used(t) != used {
		t.Fatalf("the zone or the quota changed:\n%s\n---\n%s", before, after)
	}
	noTemp(t, e.base)
}

// TestUnzipEntryOverMaxFileSize: one entry larger than max_file_size_mb is FILE_TOO_LARGE.
func TestUnzipEntryOverMaxFileSize(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_MAX_FILE_SIZE_MB": "1"})
	e.zipAt(storageDir+"/f.zip", zipOf(ziptest.Entry{Name: "big.txt", Body: ziptest.Noise(2 << 20)}))
	r := e.post("shed_unzip", map[string]any{"zone": "storage", "src": "f.zip"}, nil)
	wantError(t, r, "FILE_TOO_LARGE")
	if r.Details["entry"] != "big.txt" {
		t.Fatalf("details: %s", r.raw)
	}
}

// TestUnzipOverwrite: existing files are refused with their list unless overwrite; with
// it they are replaced and the quota counts the difference; existing folders are merged.
func TestUnzipOverwrite(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/d/keep.txt", "keep")
	e.write(storageDir+"/d/sub/a.txt", "old content")
	e.zipAt(storageDir+"/u.zip", zipOf(ziptest.Entry{Name: "sub/a.txt", Body: "new"}, ziptest.Entry{Name: "sub/b.txt", Body: "bb"}))
	r := e.post("shed_unzip", map[string]any{"zone": "storage", "src": "u.zip", "dest": "d"}, nil)
	wantError(t, r, "FILE_EXISTS")
	if ex, _ := r.Details["existing"].([]any); len(ex) != 1 || ex[0] != "sub/a.txt" || !strings.Contains(r.Hint, "overwrite=true") {
		t.Fatalf("details: %s", r.raw)
	}
	if e.disk("d/sub/b.txt") != "" {
		t.Fatal("a refused extraction wrote a file")
	}
	used := e.used(t)
	r = e.post("shed_unzip", map[string]any{"zone": "storage", "src": "u.zip", "dest": "d", "overwrite": "true"}, nil)
	wantOK(t, r)
	if e.disk("d/sub/a.txt") != "new" || e.disk("d/sub/b.txt") != "bb" || e.disk("d/keep.txt") != "keep" || r.Data["replaced_count"] != float64(1) {
		t.Fatalf("merge: %s", r.raw)
	}
	if got := e.used(t) - used; got != 3+2-11 {
		t.Fatalf("usage changed by %d, want -6", got)
	}
	// A file another conversation holds in a locked edit is not replaced.
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "d/sub/b.txt"}, conv("chat-b")))
	wantError(t, e.post("shed_unzip", map[string]any{"zone": "storage", "src": "u.zip", "dest": "d", "overwrite": true}, nil), "FILE_LOCKED")
	if e.disk("d/sub/b.txt") != "bb" {
		t.Fatal("a locked file was replaced")
	}
	// A file where the archive needs a folder, or a folder where it has a file: never replaced.
	e.zipAt(storageDir+"/k.zip", zipOf(ziptest.Entry{Name: "keep.txt/x", Body: "x"}))
	wantError(t, e.post("shed_unzip", map[string]any{"zone": "storage", "src": "k.zip", "dest": "d", "overwrite": true}, nil), "FILE_EXISTS")
	e.zipAt(storageDir+"/s.zip", zipOf(ziptest.Entry{Name: "sub", Body: "x"}))
	wantError(t, e.post("shed_unzip", map[string]any{"zone": "storage", "src": "s.zip", "dest": "d", "overwrite": true}, nil), "FILE_EXISTS")
	noTemp(t, e.base)
}

// TestUnzipDestinationChecks: zones, parameters and destinations that are refused.
func TestUnzipDestinationChecks(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.zipAt(storageDir+"/z/a.zip", zipOf(ziptest.Entry{Name: "a.txt", Body: "a"}))
	e.write(storageDir+"/afile", "f")
	if err := os.MkdirAll(filepath.Join(e.base, storageDir, "real"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(e.base, storageDir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/tmp", filepath.Join(e.base, storageDir, "out")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		code string
	}{
		{"uploads destination", map[string]any{"zone": "uploads", "src": "z/a.zip"}, "ZONE_FORBIDDEN"},
		{"no src", map[string]any{"zone": "storage"}, "MISSING_PARAMETER"},
		{"src is a folder", map[string]any{"zone": "storage", "src": "z"}, "NOT_A_FILE"},
		{"missing src", map[string]any{"zone": "storage", "src": "nope.zip"}, "FILE_NOT_FOUND"},
		{"dest is a symlink inside", map[string]any{"zone": "storage", "src": "z/a.zip", "dest": "link"}, "PATH_ESCAPE"},
		{"dest through a symlink out", map[string]any{"zone": "storage", "src": "z/a.zip", "dest": "out/x"}, "PATH_ESCAPE"},
		{"dest is a file", map[string]any{"zone": "storage", "src": "z/a.zip", "dest": "afile"}, "FILE_EXISTS"},
		{"dest below a file", map[string]any{"zone": "storage", "src": "z/a.zip", "dest": "afile/x"}, "INVALID_PATH"},
		{"dest climbing out", map[string]any{"zone": "storage", "src": "z/a.zip", "dest": "../x"}, "PATH_ESCAPE"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantError(t, e.post("shed_unzip", tc.args, nil), tc.code) })
	}
	// The default destination is the ZIP's own folder.
	r := e.post("shed_unzip", map[string]any{"zone": "storage", "src": "z/a.zip"}, nil)
	wantOK(t, r)
	if e.disk("z/a.txt") != "a" || r.Data["destination"] != "z" {
		t.Fatalf("default dest: %s", r.raw)
	}
	if _, err := os.Stat("/tmp/x/a.txt"); err == nil {
		t.Fatal("extracted through a symlink out of the zone")
	}
}

// TestUnzipIntoGroup: a group zone is a destination like Documents (versioned, the group's
// quota).
func TestUnzipIntoGroup(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_GROUPS_STATIC": `{"team":["local"]}`})
	e.zipAt(uploadsDir+"/g.zip", zipOf(ziptest.Entry{Name: "shared/plan.md", Body: "plan"}))
	r := e.post("shed_unzip", map[string]any{"zone": "group", "group": "team", "src_zone": "uploads", "src": "g.zip"}, nil)
	wantOK(t, r)
	if b, _ := os.ReadFile(filepath.Join(e.base, "groups/team/data/shared/plan.md")); string(b) != "plan" || r.Data["commit"] == nil {
		t.Fatalf("group: %s", r.raw)
	}
}

// TestArchiveLimitsAreValves: the archive valves set the limits, and shed_parameters shows
// them (the ZIP_BOMB hint sends the model there).
func TestArchiveLimitsAreValves(t *testing.T) {
	e := start(t, map[string]string{"FILESHED_ARCHIVE_MAX_ENTRIES": "5", "FILESHED_ARCHIVE_MAX_DEPTH": "3",
		"FILESHED_ARCHIVE_MAX_NAME_LENGTH": "20", "FILESHED_ARCHIVE_MAX_TOTAL_MB": "1", "FILESHED_ARCHIVE_MAX_RATIO": "1000"})
	var six []ziptest.Entry
	for _, n := range []string{"1", "2", "3", "4", "5", "6"} {
		six = append(six, ziptest.Entry{Name: n, Body: n})
	}
	for _, tc := range []struct {
		name, limit string
		entries     []ziptest.Entry
	}{
		{"entries", "entries", six},
		{"depth", "depth", []ziptest.Entry{{Name: "a/b/c/d", Body: "x"}}},
		{"name length", "name_length", []ziptest.Entry{{Name: strings.Repeat("n", 21), Body: "x"}}},
		{"total", "total_bytes", []ziptest.Entry{{Name: "a", Body: ziptest.Noise(600 << 10)}, {Name: "b", Body: ziptest.Noise(600 << 10)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.zipAt(storageDir+"/l.zip", zipOf(tc.entries...))
			r := e.post("shed_unzip", map[string]any{"zone": "storage", "src": "l.zip"}, nil)
			wantError(t, r, "ZIP_BOMB")
			if r.Details["limit"] != tc.limit || !strings.HasPrefix(r.Details["valve"].(string), "archive.") {
				t.Fatalf("details: %s", r.raw)
			}
		})
	}
	r := e.post("shed_parameters", nil, nil)
	wantOK(t, r)
	if a := r.Data["archive"].(map[string]any); a["max_entries"] != float64(5) || a["max_ratio"] != float64(1000) {
		t.Fatalf("parameters: %s", r.raw)
	}
}

// TestUnzipStagingLeftoverIsSwept: the staging folder of an extraction interrupted by a
// crash is removed whole by the start-up sweep, and the usage is measured again.
func TestUnzipStagingLeftoverIsSwept(t *testing.T) {
	cfg := config(t, nil)
	staging := filepath.Join(cfg.StorageBasePath, storageDir, confine.TempName())
	if err := os.MkdirAll(filepath.Join(staging, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(staging, "sub/half.txt"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	serve(t, cfg)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(staging); os.IsNotExist(err) {
			return
		}
	}
	t.Fatal("the staging folder was not swept")
}

// TestParallelUnzipsOfOneArchive: four extractions of one archive into one folder at
// once: exactly one succeeds, the others answer FILE_EXISTS and leave nothing (no mixed
// content, no staging folder, the quota counts one copy).
func TestParallelUnzipsOfOneArchive(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"storage", "documents"} {
		t.Run(zone, func(t *testing.T) {
			e := start(t, nil)
			e.zipAt(uploadsDir+"/p.zip", zipOf(ziptest.Entry{Name: "p/a.txt", Body: ziptest.Noise(300 << 10)},
				ziptest.Entry{Name: "p/b/c.txt", Body: ziptest.Noise(200 << 10)}))
			used, history := e.used(t), historyOnDisk(t, e)
			var wg sync.WaitGroup
			replies := make([]reply, 4)
			for i := range replies {
				wg.Go(func() {
					replies[i] = e.post("shed_unzip", map[string]any{"zone": zone, "src_zone": "uploads", "src": "p.zip", "dest": "x"}, nil)
				})
			}
			wg.Wait()
			ok := 0
			for _, r := range replies {
				switch {
				case r.Success:
					ok++
				case r.Error != "FILE_EXISTS":
					t.Errorf("unexpected: %s", r.raw)
				}
			}
			if ok != 1 {
				t.Fatalf("%d extractions succeeded, want 1", ok)
			}
			// One copy, and in Documents its history.
			if got := e.used(t) - used - (historyOnDisk(t, e) - history); got != 500<<10 {
				t.Fatalf("usage grew by %d, want %d", got, 500<<10)
			}
			noTemp(t, e.base)
		})
	}
}
