package handlers_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// diskUsage is the truth the quota must follow: the bytes of every regular file in the
// user's zones, in the history of its Documents (repo.git/objects) and in its working copies
// (the editzones), as shed_maintenance's reconcile measures them.
func diskUsage(t *testing.T, e *env, user string) int64 {
	t.Helper()
	return diskUsageAt(t, e.base, user)
}

// diskUsageAt is diskUsage of the storage directory base.
func diskUsageAt(t *testing.T, base, user string) int64 {
	t.Helper()
	var n int64
	for _, d := range []string{"Uploads", "Storage/data", "Documents/data", "Documents/repo.git/objects", "Storage/editzone", "Documents/editzone"} {
		err := filepath.WalkDir(filepath.Join(base, "users", user, d), func(_ string, de fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return fs.SkipDir
				}
				return err
			}
			if de.Type().IsRegular() {
				info, err := de.Info()
				if err != nil {
					return err
				}
				n += info.Size()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// TestExecQuotaInDocumentsFollowsTheDisk: in a versioned zone a writing command's usage
// delta comes from walks of the zone before and after it (core/command_quota.go), which also see
// what the index cannot weigh: nested folders, or an index rebuilt from HEAD. A .git
// folder is refused (PROTECTED_PATH, issue 23) to a command and to a file tool alike. After
// every step, refused ones included, the recorded usage must equal what is on disk: a
// quota escape, or double counting, fails here.
func TestExecQuotaInDocumentsFollowsTheDisk(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Documents/data/seed.txt", "0123456789")
	index := filepath.Join(e.base, "users/local/Documents/repo.git/index")
	steps := []struct {
		name    string
		call    func() reply
		refused string // the error code expected ("" = success)
	}{
		{"FirstCommandWalks", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "echo", "args": []string{"hello"}, "stdout_file": "notes.txt"})
		}, ""},
		{"CopyFromIndex", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"seed.txt", "copy.txt"}})
		}, ""},
		{"PatchBetweenCommands", func() reply {
			return e.post("shed_patch_text", map[string]any{"zone": "documents", "path": "copy.txt", "content": "more bytes\n"}, nil)
		}, ""},
		{"GrowAfterPatch", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"copy.txt", "copy2.txt"}})
		}, ""},
		{"DeleteFromIndex", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "rm", "args": []string{"copy.txt"}})
		}, ""},
		{"CommandWritesDotGit", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"-r", "copy2.txt", ".git"}})
		}, "PROTECTED_PATH"},
		{"CommandWithoutDotGit", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"seed.txt", "s2.txt"}})
		}, ""},
		{"FileToolWritesDotGit", func() reply {
			return e.post("shed_create_file", map[string]any{"zone": "documents", "path": "sub/.git/hidden", "content": "twenty bytes of data"}, nil)
		}, "PROTECTED_PATH"},
		{"CommandAfterFileToolDotGit", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"seed.txt", "s3.txt"}})
		}, ""},
		{"CommandInDotGitFolder", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"seed.txt", "sub/.git/more"}})
		}, "PROTECTED_PATH"},
		{"CommandMakesNestedFolder", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "mkdir", "args": []string{"-p", "sub/deeper"}})
		}, ""},
		{"CommandRemovesNestedFolder", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "rm", "args": []string{"-r", "sub"}})
		}, ""},
		{"IndexRebuiltFromHead", func() reply {
			if err := os.Remove(index); err != nil {
				t.Fatal(err)
			}
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"notes.txt", "n2.txt"}})
		}, ""},
		{"CommandAfterRebuild", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"seed.txt", "s4.txt"}})
		}, ""},
	}
	for _, s := range steps {
		r := s.call()
		switch {
		case s.refused != "":
			if r.Success || r.Error != s.refused {
				t.Fatalf("%s: want %s, got %s", s.name, s.refused, r.raw)
			}
		case !r.Success || (r.Data["returncode"] != nil && r.Data["returncode"] != 0.0):
			t.Fatalf("%s: %s", s.name, r.raw)
		}
		if got, want := usage(t, e, "local"), diskUsage(t, e, "local"); got != want {
			t.Fatalf("%s: recorded usage %d, disk %d", s.name, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(e.base, "users/local/Documents/data/s4.txt")); err != nil {
		t.Fatal(err)
	}
}
