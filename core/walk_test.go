package core

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/internal/testtool"
)

// TestWalkDeeperThanOpenFilesLimit: a tree deeper than the descriptors the process may open
// (and than PATH_MAX) is walked whole: the walk holds one folder open at a time.
func TestWalkDeeperThanOpenFilesLimit(t *testing.T) {
	if !testtool.Alone(t, nil, nil) { // it lowers the process's RLIMIT_NOFILE
		return
	}
	root := t.TempDir()
	fd, err := unix.Open(root, walkDirFlags, 0)
	if err != nil {
		t.Fatal(err)
	}
	const depth = 2100 // "d/" × 2,100 = 4,200 bytes: no full path names the bottom
	for range depth {
		if err := unix.Mkdirat(fd, "d", 0o700); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", walkDirFlags, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	out, err := unix.Openat(fd, "bottom.txt", unix.O_WRONLY|unix.O_CREAT, 0o600)
	unix.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	unix.Write(out, []byte("12345"))
	unix.Close(out)

	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = 256
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	u, werr := walkUsage(context.Background(), root, false, false)
	snap, serr := TakeSnapshot(root)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	if werr != nil || u.SizeBytes != 5 || u.Entries != depth+1 || len(u.Unmeasured) > 0 {
		t.Fatalf("usage walk: %+v, %v", u, werr)
	}
	bottom := strings.Repeat("d/", depth) + "bottom.txt"
	if serr != nil || snap.total != 5 || len(snap.Entries) != depth+1 || snap.Entries[bottom].Size != 5 {
		t.Fatalf("snapshot: total %d, %d names, %v", snap.total, len(snap.Entries), serr)
	}
}

// TestWalkFollowsOrReportsFoldersMovedUnderIt: a command moves folders while the walk is
// inside them. Where the walk can still go back up the way it came it finishes everything;
// where its way back is gone, the lost folder is reported by its path and the rest of the
// tree is walked.
func TestWalkFollowsOrReportsFoldersMovedUnderIt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		moves    [][2]string
		problems []string
		visited  []string
	}{
		{name: "the folder moves with the walk inside", moves: [][2]string{{"a", "w"}},
			visited: []string{"a/b/c/f2", "a/x/f3", "a/y", "q"}},
		{name: "the way back is gone", moves: [][2]string{{"a/b", "z"}, {"a", "w"}},
			problems: []string{"a: moved during the walk"}, visited: []string{"a/b/c/f2", "q"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, p := range []string{"a/b/c/f1", "a/b/c/f2", "a/x/f3", "a/y", "q"} {
				if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, p), []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var seen []string
			var problems walkProblems
			w := treeWalk{
				order: func(_ string, ents []walkEnt) []walkEnt {
					slices.SortFunc(ents, func(a, b walkEnt) int { return strings.Compare(a.name, b.name) })
					return ents
				},
				visit: func(_ int, rel string, e walkEnt) (bool, error) {
					seen = append(seen, rel)
					if rel == "a/b/c/f1" {
						for _, m := range tc.moves {
							if err := os.Rename(filepath.Join(root, m[0]), filepath.Join(root, m[1])); err != nil {
								t.Fatal(err)
							}
						}
					}
					return true, nil
				},
				problem: problems.add,
			}
			if err := w.run(context.Background(), root); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(problems.first, tc.problems) || problems.count != len(tc.problems) {
				t.Fatalf("problems: %d %v, want %v", problems.count, problems.first, tc.problems)
			}
			for _, want := range tc.visited {
				if !slices.Contains(seen, want) {
					t.Fatalf("%s not visited: %v", want, seen)
				}
			}
		})
	}
}
