package files

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fileshed/fileshed/core"
)

// TestDeleteFollowsTheOneGitRule: shed_delete refuses exactly what the kernel protects from a
// remove: core.ProtectedReason (a versioned zone's .git in any spelling, at any depth) and
// core.KeptClone (the .git at the top of any zone, the original's rule: TestDeleteRefusals).
// Issue 35: delete.go had that second rule of its own. Hostile paths (traversal, absolute, a
// link to a protected name) sit in the same table.
func TestDeleteFollowsTheOneGitRule(t *testing.T) {
	s, base := testService(t, nil)
	c, err := core.NewCaller("local", "", "", "", "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, zone, plant, path string
		link                    string // plant is a symlink to link
		want                    core.Code
	}{
		{"storage .git", "storage", ".git/config", ".git", "", core.ProtectedPath},
		{"storage .git file", "storage", ".git/config", ".git/config", "", core.ProtectedPath},
		{"storage nested .git", "storage", "proj/.git/HEAD", "proj/.git", "", ""},
		{"storage .GIT", "storage", ".GIT/x", ".GIT", "", ""},
		{"documents .git", "documents", ".git/config", ".git", "", core.ProtectedPath},
		{"documents nested .git", "documents", "proj/.git/HEAD", "proj/.git", "", core.ProtectedPath},
		{"documents .GIT", "documents", ".GIT/x", ".GIT", "", core.ProtectedPath},
		{"documents git~1", "documents", "git~1", "git~1", "", core.ProtectedPath},
		{"documents gitx", "documents", "gitx", "gitx", "", ""},
		{"documents link to .git (the link goes)", "documents", "lnk", "lnk", ".git", ""},
		{"traversal to documents .git", "storage", ".git/config", "../../Documents/data/.git", "", core.PathEscape},
		{"absolute", "storage", ".git/config", "/.git", "", core.PathEscape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zoneDir := filepath.Join(base, "users", "local", map[string]string{"storage": "Storage", "documents": "Documents"}[tc.zone], "data")
			host := filepath.Join(zoneDir, filepath.FromSlash(tc.plant))
			if err := os.MkdirAll(filepath.Dir(host), 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.link != "" {
				err = os.Symlink(tc.link, host)
			} else {
				err = os.WriteFile(host, []byte("x"), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(zoneDir)
			if tc.want != core.PathEscape {
				z := &core.Zone{Versioned: tc.zone == "documents"}
				if protected := core.ProtectedReason(z, tc.path) != "" || core.KeptClone(tc.path); protected != (tc.want == core.ProtectedPath) {
					t.Fatalf("the table says %q for %s, core.ProtectedReason says protected=%v", tc.want, tc.path, protected)
				}
			}
			_, err := s.Delete(ctx, c, DeleteInput{ZoneArgs: core.ZoneArgs{Zone: tc.zone}, Path: tc.path})
			var got core.Code
			if e, ok := core.AsError(err); ok {
				got = e.Code
			} else if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("delete %s in %s: %q (%v), want %q", tc.path, tc.zone, got, err, tc.want)
			}
			_, statErr := os.Lstat(filepath.Join(zoneDir, filepath.FromSlash(tc.path)))
			if gone := os.IsNotExist(statErr); tc.want == "" && !gone {
				t.Errorf("%s is still there after its delete", tc.path)
			}
			if _, err := os.Lstat(host); tc.want != "" && err != nil {
				t.Errorf("%s was refused but %s is gone: %v", tc.path, tc.plant, err)
			}
		})
	}
}
