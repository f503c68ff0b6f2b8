package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTreeLists(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.post("shed_tree", map[string]any{"zone": "storage"}, nil)
	wantOK(t, r)
	if r.Data["tree"] != "(empty)" || r.Message != "Zone is empty" {
		t.Fatalf("empty zone: %s", r.raw)
	}
	e.write("users/local/Storage/data/notes/a.txt", "hello")
	e.write("users/local/Storage/data/b.txt", strings.Repeat("x", 2048))
	e.write("users/local/Storage/data/.hidden", "x")
	r = e.post("shed_tree", map[string]any{"zone": "Storage", "depth": "2"}, nil)
	wantOK(t, r)
	// Dotfiles are shown (issue 32): a download ships them, so nothing shipped is hidden.
	want := "Storage/\n├── notes/\n│   └── a.txt (5B)\n├── .hidden (1B)\n└── b.txt (2.0K)"
	if r.Data["tree"] != want {
		t.Fatalf("tree:\n%s\nwant:\n%s", r.Data["tree"], want)
	}
	if r.Data["depth"] != float64(2) || r.Data["zone"] != "Storage" {
		t.Fatalf("data: %v", r.Data)
	}
	r = e.post("shed_tree", map[string]any{"zone": "storage", "path": "notes"}, nil)
	wantOK(t, r)
	if r.Data["tree"] != "notes/\n└── a.txt (5B)" {
		t.Fatalf("subtree: %q", r.Data["tree"])
	}
}

func TestTreeCapsEntries(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	for i := range 105 {
		e.write(filepath.Join("users/local/Storage/data/many", strings.Repeat("f", 1)+string(rune('a'+i/26))+string(rune('a'+i%26))), "x")
	}
	r := e.post("shed_tree", map[string]any{"zone": "storage", "path": "many"}, nil)
	wantOK(t, r)
	if !strings.Contains(r.Data["tree"].(string), "... and 5 more items") {
		t.Fatalf("no cap marker: %s", r.Data["tree"])
	}
}

func TestTreeArguments(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Storage/data/file.txt", "x")
	cases := []struct {
		name string
		body any
		code string
	}{
		{"missing zone", map[string]any{}, "MISSING_PARAMETER"},
		{"zone null is absent", map[string]any{"zone": nil}, "MISSING_PARAMETER"},
		{"unknown zone", map[string]any{"zone": "etc"}, "INVALID_ZONE"},
		{"negative depth", map[string]any{"zone": "storage", "depth": -1}, "INVALID_PARAMETER"},
		{"depth not a number", map[string]any{"zone": "storage", "depth": "three"}, "INVALID_PARAMETER"},
		{"depth fractional", map[string]any{"zone": "storage", "depth": 1.5}, "INVALID_PARAMETER"},
		{"path missing", map[string]any{"zone": "storage", "path": "nope"}, "FILE_NOT_FOUND"},
		{"path is a file", map[string]any{"zone": "storage", "path": "file.txt"}, "INVALID_PARAMETER"},
		{"zone prefix", map[string]any{"zone": "storage", "path": "storage/x"}, "PATH_STARTS_WITH_ZONE"},
		{"body not an object", `[1,2]`, "INVALID_PARAMETER"},
		{"malformed json", `{"zone": "storage"`, "INVALID_PARAMETER"},
		{"group zone without group", map[string]any{"zone": "group"}, "MISSING_PARAMETER"},
		{"group zone unavailable", map[string]any{"zone": "group", "group": "team"}, "GROUP_NOT_AVAILABLE"},
		{"group with traversal", map[string]any{"zone": "group", "group": "../x"}, "INVALID_GROUP_ID"},
		{"group with control char", map[string]any{"zone": "group", "group": "a\x01"}, "INVALID_GROUP_ID"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post("shed_tree", tc.body, nil)
			wantError(t, r, tc.code)
			if r.Status != 200 {
				t.Fatalf("domain errors answer 200, got %d", r.Status)
			}
			if (tc.code == "INVALID_PARAMETER" || tc.code == "MISSING_PARAMETER") && !strings.HasPrefix(r.Usage, "shed_tree(zone") {
				t.Fatalf("parameter error without usage: %s", r.raw)
			}
		})
	}
}

func TestTreeLenientInput(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Storage/data/d/e/f/g.txt", "x")
	cases := []struct {
		name string
		body string
	}{
		{"depth as string", `{"zone":"storage","depth":"1"}`},
		{"empty strings are absent", `{"zone":"storage","path":"","group":"","depth":""}`},
		{"nulls are absent", `{"zone":"storage","path":null,"depth":null,"allow_zone_in_path":null}`},
		{"unknown keys ignored", `{"zone":"storage","colour":"blue","nested":{"a":1}}`},
		{"bool as string", `{"zone":"storage","allow_zone_in_path":"true"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantOK(t, e.post("shed_tree", tc.body, nil))
		})
	}
}

// TestTreeHostilePaths: every way out of the zone is refused, and no host path leaks
// (the harness checks every error body for the storage path).
func TestTreeHostilePaths(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Storage/data/ok/x.txt", "x")
	e.write("users/local/Storage/data_evil/secret.txt", "secret")
	e.write("users/other/Storage/data/private/p.txt", "private")
	zone := filepath.Join(e.base, "users/local/Storage/data")
	for name, target := range map[string]string{
		"outdir":   filepath.Join(e.base, "users/other/Storage/data/private"),
		"relout":   "../../../other/Storage/data/private",
		"dangling": "/nonexistent/place",
		"inside":   "missing-target",
		"evil":     "../data_evil",
	} {
		if err := os.Symlink(target, filepath.Join(zone, name)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct{ path, code string }{
		{"../x", "PATH_ESCAPE"},
		{"a/../../x", "PATH_ESCAPE"},
		{"/etc", "PATH_ESCAPE"},
		{"//etc", "PATH_ESCAPE"},
		{`C:\x`, "PATH_ESCAPE"},
		{`a\..\..\x`, "PATH_ESCAPE"},
		{"../data_evil", "PATH_ESCAPE"},
		{"%2e%2e/x", "FILE_NOT_FOUND"},
		{"a\x00b", "INVALID_PATH"},
		{strings.Repeat("n", 5000), "INVALID_PATH"},
		{"outdir", "PATH_ESCAPE"},
		{"relout", "PATH_ESCAPE"},
		{"evil", "PATH_ESCAPE"},
		{"dangling", "PATH_ESCAPE"},
		{"inside", "FILE_NOT_FOUND"},
	}
	for _, tc := range cases {
		t.Run(tc.path[:min(len(tc.path), 20)], func(t *testing.T) {
			r := e.post("shed_tree", map[string]any{"zone": "storage", "path": tc.path}, nil)
			wantError(t, r, tc.code)
			if strings.Contains(r.raw, "private") && tc.path != "outdir" {
				t.Fatalf("listed another user's files: %s", r.raw)
			}
		})
	}
	// The root listing shows the links but never descends through them.
	r := e.post("shed_tree", map[string]any{"zone": "storage", "depth": 5}, nil)
	wantOK(t, r)
	if strings.Contains(r.raw, "p.txt") || strings.Contains(r.raw, "secret") {
		t.Fatalf("tree followed a symlink out of the zone: %s", r.raw)
	}
}
