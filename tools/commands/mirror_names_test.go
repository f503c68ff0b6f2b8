package commands

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fileshed/fileshed/core"
)

// TestMirrorNames: a command that reads only its files gets a mirror of those files (and
// its output files); anything else, or a folder, a symlink, the zone root, a list of names
// read from a file, gets the whole zone (nil).
func TestMirrorNames(t *testing.T) {
	s, base := testService(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": "mirror-names-master-key-0123456789abcdef"})
	c := core.Caller{UserID: "u1", ConvID: "c1"}
	ctx := context.Background()
	if _, err := s.NewUserKey(ctx, c.UserID); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(base, "users", "u1", "Storage", "data")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(data, "d"), 0o700))
	must(os.WriteFile(filepath.Join(data, "a.txt"), []byte("a"), 0o600))
	must(os.WriteFile(filepath.Join(data, "d", "b.txt"), []byte("b"), 0o600))
	must(os.Symlink("a.txt", filepath.Join(data, "link")))
	z, err := s.ResolveZone(ctx, c, "storage", "", false)
	must(err)
	defer z.Close()
	if !z.Fs().Sealed() {
		t.Fatal("the zone is not sealed")
	}
	for _, tc := range []struct {
		name  string
		in    ExecInput
		want  []string
		whole bool
	}{
		{"cat one file", ExecInput{Cmd: "cat", Args: []string{"a.txt"}}, []string{"a.txt"}, false},
		{"sed -i two files", ExecInput{Cmd: "sed", Args: []string{"-i", "s/a/b/", "a.txt", "d/b.txt"}}, []string{"a.txt", "d/b.txt"}, false},
		{"sort -o new file", ExecInput{Cmd: "sort", Args: []string{"-o", "d/out.txt", "a.txt"}}, []string{"d/out.txt", "a.txt"}, false},
		{"stdout_file", ExecInput{Cmd: "wc", Args: []string{"-c", "a.txt"}, StdoutFile: "d/count.txt"}, []string{"a.txt", "d/count.txt"}, false},
		{"no operand", ExecInput{Cmd: "ls"}, nil, true},
		{"a folder", ExecInput{Cmd: "grep", Args: []string{"-r", "x", "d"}}, nil, true},
		{"the zone root", ExecInput{Cmd: "ls", Args: []string{"."}}, nil, true},
		{"a symlink", ExecInput{Cmd: "cat", Args: []string{"link"}}, nil, true},
		{"names from a file", ExecInput{Cmd: "du", Args: []string{"--files0-from=a.txt"}}, nil, true},
		{"not operand-only", ExecInput{Cmd: "tar", Args: []string{"-tf", "a.txt"}}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Zone = "storage"
			p, err := s.plan(z, z.Fs(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got := mirrorNames(z, tc.in.Cmd, p)
			if tc.whole {
				if got != nil {
					t.Fatalf("want the whole zone, got %v", got)
				}
				return
			}
			slices.Sort(got)
			slices.Sort(tc.want)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("names = %v, want %v", got, tc.want)
			}
		})
	}
}
