package handlers_test

import (
	"strings"
	"testing"
)

// TestPatternNotFoundTeaches: a pattern that misses names the lines meant — those it
// matches once whitespace is read loosely (spaces for a tab, doubled spaces, a regex
// character taken literally), else the most similar lines — as anchors the retry can use;
// a pattern that matches several lines says how many and where; FILE_CHANGED on a text
// edit shows the lines around it as they are now.
func TestPatternNotFoundTeaches(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	text := "package main\n\nfunc main() {\n\tfmt.Println(\"hi\")\n\treturn\n}\n"
	e.write(zoneDir+"m.go", text)
	cases := []struct {
		name, pattern, position, by string
		want                        string // the first candidate
	}{
		{"spaces for a tab", "^    fmt.Println", "replace", "whitespace", lineAnchor(4, "\tfmt.Println(\"hi\")") + "|\tfmt.Println(\"hi\")"},
		{"doubled spaces", "func  main", "after", "whitespace", lineAnchor(3, "func main() {") + "|func main() {"},
		{"regex characters taken literally", "^func main() {$", "after", "whitespace", lineAnchor(3, "func main() {") + "|func main() {"},
		{"a typo", "fmt.Printn(\"hi\")", "before", "similarity", lineAnchor(4, "\tfmt.Println(\"hi\")") + "|\tfmt.Println(\"hi\")"},
	}
	for _, tc := range cases {
		r := e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "m.go", "position": tc.position, "pattern": tc.pattern, "content": "x"}, nil)
		wantError(t, r, "PATTERN_NOT_FOUND")
		cands, _ := r.Details["candidates"].([]any)
		if len(cands) == 0 || cands[0] != tc.want || r.Details["candidates_by"] != tc.by || !strings.Contains(r.Hint, "anchor=") {
			t.Errorf("%s: %s", tc.name, r.raw)
		}
	}
	r := e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "m.go", "position": "after", "pattern": "zzzz qqqq", "content": "x"}, nil)
	wantError(t, r, "PATTERN_NOT_FOUND")
	if _, ok := r.Details["candidates"]; ok {
		t.Errorf("nothing like it, yet candidates: %s", r.raw)
	}
	if e.disk("m.go") != text {
		t.Fatal("a miss wrote")
	}
	// Several matches where one is edited: how many and where.
	e.write(zoneDir+"d.txt", "a\nTODO 1\nb\nTODO 2\nTODO 3\n")
	r = e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "d.txt", "position": "after", "pattern": "^TODO", "content": "x"}, nil)
	wantOK(t, r)
	if !strings.Contains(r.Message, "matches 3 places (line 2, 4, 5)") {
		t.Errorf("several matches, line edit: %s", r.raw)
	}
	r = e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "d.txt", "position": "replace", "pattern": "TODO", "content": "DONE"}, nil)
	wantOK(t, r)
	if !strings.Contains(r.Message, "matches 3 places (line 2, 5, 6)") {
		t.Errorf("several matches, pattern replace: %s", r.raw)
	}
	// FILE_CHANGED shows the lines around the edit, with their anchors.
	r = e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "m.go", "position": "replace", "line": 4, "content": "x", "expected_hash": sha16("old")}, nil)
	wantError(t, r, "FILE_CHANGED")
	lines, _ := r.Details["lines"].([]any)
	if len(lines) != 5 || lines[0] != lineAnchor(2, "")+"|" || lines[2] != lineAnchor(4, "\tfmt.Println(\"hi\")")+"|\tfmt.Println(\"hi\")" {
		t.Errorf("FILE_CHANGED lines: %s", r.raw)
	}
}
