package handlers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFamilyRejectsEscapes: traversal, absolute paths, NUL, invalid UTF-8 in the path,
// symlinks out of the zone (file, folder, dangling) and into another user's zone are refused
// by all four tools, and nothing of the outside is disclosed (the harness also checks that no
// host path leaks).
func TestReadFamilyRejectsEscapes(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(zoneDir+"ok.txt", "fine\n")
	e.write("users/other/Storage/data/secret.txt", "other user's secret\n")
	secret := filepath.Join(e.base, "users/other/Storage/data/secret.txt")
	outside := filepath.Join(filepath.Dir(e.base), "outside-"+filepath.Base(e.base)+".txt")
	if err := os.WriteFile(outside, []byte("host secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(outside) })
	zone := filepath.Join(e.base, zoneDir)
	links := map[string]string{
		"to-other-user":  secret,
		"rel-other-user": "../../../other/Storage/data/secret.txt",
		"to-host-file":   outside,
		"to-etc":         "/etc",
		"to-passwd":      "/etc/passwd",
		"dangling-out":   "/nonexistent/place",
		"to-zone-parent": "..",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(zone, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("missing-target", filepath.Join(zone, "dangling-in")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ok.txt", filepath.Join(zone, "inside-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop", filepath.Join(zone, "loop")); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{
		"../../other/Storage/data/secret.txt": "PATH_ESCAPE",
		"a/../../ok.txt":                      "PATH_ESCAPE",
		"/etc/passwd":                         "PATH_ESCAPE",
		"to-other-user":                       "PATH_ESCAPE",
		"rel-other-user":                      "PATH_ESCAPE",
		"to-host-file":                        "PATH_ESCAPE",
		"to-passwd":                           "PATH_ESCAPE",
		"to-etc":                              "PATH_ESCAPE",
		"to-etc/passwd":                       "PATH_ESCAPE",
		"to-zone-parent/x":                    "PATH_ESCAPE",
		"dangling-out":                        "PATH_ESCAPE",
		"dangling-in":                         "FILE_NOT_FOUND",
		"loop":                                "INVALID_PATH",
		"ok.txt\x00.png":                      "INVALID_PATH",
		"ok.txt\n":                            "INVALID_PATH",
		"C:\\Windows\\win.ini":                "PATH_ESCAPE",
	}
	for _, tool := range []string{"shed_read", "shed_read_bytes", "shed_hexdump", "shed_file_type"} {
		for p, code := range paths {
			t.Run(tool+" "+p, func(t *testing.T) {
				r := e.post(tool, map[string]any{"zone": "storage", "path": p}, nil)
				wantError(t, r, code)
				for _, s := range []string{"secret", "root:", "host secret"} {
					if strings.Contains(r.raw, s) && !strings.Contains(p, s) {
						t.Fatalf("disclosed %q: %s", s, r.raw)
					}
				}
			})
		}
		t.Run(tool+" inside link", func(t *testing.T) {
			wantOK(t, e.post(tool, map[string]any{"zone": "storage", "path": "inside-link"}, nil))
		})
	}
	// Invalid UTF-8 cannot reach a path: JSON decoding turns it into U+FFFD.
	wantError(t, e.post("shed_read", "{\"zone\":\"storage\",\"path\":\"ok\xff.txt\"}", nil), "FILE_NOT_FOUND")
	// Another user's zone is not reachable by naming it as a group either.
	wantError(t, e.post("shed_read", map[string]any{"zone": "group", "group": "../users/other", "path": "x"}, nil), "INVALID_GROUP_ID")
}

// TestReadFamilyAllZones: the four read tools work in every zone, Uploads included, and
// refuse a group the caller is not a member of.
func TestReadFamilyAllZones(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_GROUPS_STATIC": `{"team":["local"],"secret":["someone"]}`})
	files := map[string]string{
		"uploads":   "users/local/Uploads/conv-1/f.txt",
		"storage":   "users/local/Storage/data/f.txt",
		"documents": "users/local/Documents/data/f.txt",
		"group":     "groups/team/data/f.txt",
	}
	for zone, rel := range files {
		e.write(rel, zone+"\n")
	}
	e.write("groups/secret/data/f.txt", "not yours\n")
	headers := map[string]string{"X-OpenWebUI-Chat-Id": "conv-1"}
	for _, tool := range []string{"shed_read", "shed_read_bytes", "shed_hexdump", "shed_file_type"} {
		for zone := range files {
			t.Run(tool+" "+zone, func(t *testing.T) {
				r := e.post(tool, map[string]any{"zone": zone, "group": "team", "path": "f.txt"}, headers)
				wantOK(t, r)
				if tool == "shed_read" && r.Data["content"] != zone+"\n" {
					t.Fatalf("content: %s", r.raw)
				}
			})
		}
		t.Run(tool+" foreign group", func(t *testing.T) {
			r := e.post(tool, map[string]any{"zone": "group", "group": "secret", "path": "f.txt"}, headers)
			wantError(t, r, "GROUP_ACCESS_DENIED")
			if strings.Contains(r.raw, "not yours") {
				t.Fatalf("disclosed: %s", r.raw)
			}
		})
	}
	// Another conversation's uploads are not this conversation's Uploads zone.
	wantError(t, e.post("shed_read", map[string]any{"zone": "uploads", "path": "f.txt"}, map[string]string{"X-OpenWebUI-Chat-Id": "conv-2"}), "FILE_NOT_FOUND")
	wantError(t, e.post("shed_read", map[string]any{"zone": "uploads", "path": "../conv-1/f.txt"}, map[string]string{"X-OpenWebUI-Chat-Id": "conv-2"}), "PATH_ESCAPE")
}

// TestReadLargeFileRange: a small range of a 50 MB file over HTTP answers exactly those
// lines, with the total line count (memory is measured by core's TestReadLargeFileBoundedMemory).
func TestReadLargeFileRange(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a 50 MB file")
	}
	e := start(t, nil)
	var b strings.Builder
	b.Grow(50 << 20)
	for i := 1; b.Len() < 50<<20; i++ {
		fmt.Fprintf(&b, "row %08d\r\n", i)
	}
	e.write(zoneDir+"huge.csv", b.String())
	lines := float64(b.Len() / 14)
	cases := []struct {
		name       string
		start, end any
		first      string
		last       string
	}{
		{"middle", 2_000_000, 2_000_002, "row 02000000\r\n", "row 02000002\r\n"},
		{"end", lines - 1, nil, fmt.Sprintf("row %08d\r\n", int(lines)-1), fmt.Sprintf("row %08d\r\n", int(lines))},
		{"huge end_line", 3, int64(1) << 62, "row 00000003\r\n", fmt.Sprintf("row %08d\r\n", int(lines))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post("shed_read", map[string]any{"zone": "storage", "path": "huge.csv", "start_line": tc.start, "end_line": tc.end}, nil)
			wantOK(t, r)
			c := r.Data["content"].(string)
			if !strings.HasPrefix(c, tc.first) || !strings.HasSuffix(c, tc.last) || r.Data["total_lines"] != lines {
				t.Fatalf("%.60q ... %q, total %v", c, c[max(0, len(c)-20):], r.Data["total_lines"])
			}
		})
	}
	wantError(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "huge.csv", "start_line": int64(1) << 62}, nil), "INVALID_PARAMETER")
}
