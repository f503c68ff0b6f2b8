package handlers_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// diskUsage is the truth the quota must follow: the bytes of every regular file in the
// user's zones (as shed_maintenance's reconcile measures them).
func diskUsage(t *testing.T, e *env, user string) int64 {
	t.Helper()
	var n int64
	for _, d := range []string{"Uploads", "Storage/data", "Documents/data"} {
		err := filepath.WalkDir(filepath.Join(e.base, "users", user, d), func(_ string, de fs.DirEntry, err error) error {
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
// delta comes from walks of the zone before and after it (exec_quota.go), which also see
// what the index cannot weigh: a .git folder (never versioned, so never scanned) made by
// a command or by a file tool, or an index rebuilt from HEAD. After every step the
// recorded usage must equal what is on disk: a quota escape through .git, or double
// counting, fails here.
func TestExecQuotaInDocumentsFollowsTheDisk(t *testing.T) {
	e := start(t, nil)
	e.write("users/local/Documents/data/seed.txt", "0123456789")
	index := filepath.Join(e.base, "users/local/Documents/repo.git/index")
	steps := []struct {
		name string
		call func() reply
	}{
		{"FirstCommandWalks", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "echo", "args": []string{"hello"}, "stdout_file": "notes.txt"})
		}},
		{"CopyFromIndex", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"seed.txt", "copy.txt"}})
		}},
		{"PatchBetweenCommands", func() reply {
			return e.post("shed_patch_text", map[string]any{"zone": "documents", "path": "copy.txt", "content": "more bytes\n"}, nil)
		}},
		{"GrowAfterPatch", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"copy.txt", "copy2.txt"}})
		}},
		{"DeleteFromIndex", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "rm", "args": []string{"copy.txt"}})
		}},
		{"CommandWritesDotGit", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"-r", "copy2.txt", ".git"}})
		}},
		{"CommandWithDotGitPresent", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"seed.txt", "s2.txt"}})
		}},
		{"CommandRemovesDotGit", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "rm", "args": []string{".git"}})
		}},
		{"FileToolWritesDotGit", func() reply {
			return e.post("shed_create_file", map[string]any{"zone": "documents", "path": "sub/.git/hidden", "content": "twenty bytes of data"}, nil)
		}},
		{"CommandAfterFileToolDotGit", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"seed.txt", "s3.txt"}})
		}},
		{"CommandInDotGitFolder", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"seed.txt", "sub/.git/more"}})
		}},
		{"CommandRemovesNestedDotGit", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "rm", "args": []string{"-r", "sub"}})
		}},
		{"IndexRebuiltFromHead", func() reply {
			if err := os.Remove(index); err != nil {
				t.Fatal(err)
			}
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"notes.txt", "n2.txt"}})
		}},
		{"CommandAfterRebuild", func() reply {
			return runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"seed.txt", "s4.txt"}})
		}},
	}
	for _, s := range steps {
		r := s.call()
		if !r.Success || (r.Data["returncode"] != nil && r.Data["returncode"] != 0.0) {
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
