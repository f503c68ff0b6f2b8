package handlers_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestEmptyContentIsAValue: content "" is a value (an empty working copy, an empty
// replacement), a missing content is MISSING_PARAMETER instead of a silent no-op.
func TestEmptyContentIsAValue(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/f.txt", "1\n2\n3\n")
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "f.txt"}, nil))
	r := e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "f.txt", "content": ""}, nil)
	wantOK(t, r)
	if r.Data["new_size"] != float64(0) {
		t.Fatalf("overwrite with \"\": %s", r.raw)
	}
	wantOK(t, e.post("shed_lockedit_save", map[string]any{"zone": "storage", "path": "f.txt"}, nil))
	if got := e.disk("f.txt"); got != "" {
		t.Fatalf("saved %q, want an empty file", got)
	}
	wantError(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "f.txt"}, nil), "MISSING_PARAMETER")

	e.write(storageDir+"/g.txt", "1\n2\n3\n")
	r = e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "g.txt", "position": "replace", "line": 2, "content": ""}, nil)
	wantOK(t, r)
	if got := e.disk("g.txt"); got != "1\n3\n" {
		t.Fatalf("replace with \"\": %q", got)
	}
	for _, tool := range []string{"shed_patch_text", "shed_patch_bytes"} {
		for _, body := range []map[string]any{
			{"zone": "storage", "path": "g.txt"},
			{"zone": "storage", "path": "g.txt", "content": nil},
			{"zone": "storage", "path": "g.txt", "position": "start"},
		} {
			r := e.post(tool, body, nil)
			wantError(t, r, "MISSING_PARAMETER")
			if r.Details["parameter"] != "content" || !strings.Contains(r.Usage, "content") {
				t.Fatalf("%s: %s", tool, r.raw)
			}
		}
	}
	if got := e.disk("g.txt"); got != "1\n3\n" {
		t.Fatalf("a refused call changed the file: %q", got)
	}
}

// TestSentinelsAreNotValues: line=0, end_line=0 and a negative offset or length are invalid
// values, not "absent".
func TestSentinelsAreNotValues(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/f.txt", "1\n2\n")
	e.write(storageDir+"/b.bin", "abcd")
	cases := []struct {
		tool, param string
		args        map[string]any
	}{
		{"shed_patch_text", "line", map[string]any{"path": "f.txt", "position": "before", "line": 0, "content": "x"}},
		{"shed_patch_text", "line", map[string]any{"path": "f.txt", "position": "after", "line": "-1", "content": "x"}},
		{"shed_patch_text", "end_line", map[string]any{"path": "f.txt", "position": "replace", "line": 1, "end_line": 0, "content": "x"}},
		{"shed_patch_bytes", "offset", map[string]any{"path": "b.bin", "position": "at", "offset": -1, "content": "00"}},
		{"shed_patch_bytes", "offset", map[string]any{"path": "b.bin", "position": "at", "offset": -5, "content": "00"}},
		{"shed_patch_bytes", "length", map[string]any{"path": "b.bin", "position": "replace", "offset": 0, "length": -1, "content": "00"}},
	}
	for _, tc := range cases {
		tc.args["zone"] = "storage"
		r := e.post(tc.tool, tc.args, nil)
		wantError(t, r, "INVALID_PARAMETER")
		if r.Details["parameter"] != tc.param || !strings.Contains(r.Hint, tc.param) {
			t.Fatalf("%s %v: %s", tc.tool, tc.args, r.raw)
		}
	}
	if e.disk("f.txt") != "1\n2\n" || e.disk("b.bin") != "abcd" {
		t.Fatal("a refused call changed a file")
	}
	// Reads: length=0 is zero bytes (as the original's bytes[offset:offset+0]), not "to the
	// end"; end_line=0 is invalid, not "to the end".
	r := e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": "b.bin", "length": 0}, nil)
	if wantOK(t, r); r.Data["bytes_read"] != float64(0) || r.Data["content"] != "" {
		t.Fatalf("length=0: %s", r.raw)
	}
	r = e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": "b.bin", "offset": 1}, nil)
	if wantOK(t, r); r.Data["content"] != "626364" {
		t.Fatalf("no length reads to the end: %s", r.raw)
	}
	wantError(t, e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": "b.bin", "length": -1}, nil), "INVALID_PARAMETER")
	wantError(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "f.txt", "end_line": 0}, nil), "INVALID_PARAMETER")
	// Absent stays absent: position=at without offset is still "missing".
	wantError(t, e.post("shed_patch_bytes", map[string]any{"zone": "storage", "path": "b.bin", "position": "at", "content": "00"}, nil), "MISSING_PARAMETER")
	wantError(t, e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "f.txt", "position": "after", "content": "x"}, nil), "MISSING_PARAMETER")
	// offset 0 is a real value.
	wantOK(t, e.post("shed_patch_bytes", map[string]any{"zone": "storage", "path": "b.bin", "position": "at", "offset": 0, "content": "5a"}, nil))
	if got := e.disk("b.bin"); got != "Zabcd" {
		t.Fatalf("offset 0: %q", got)
	}
}

// TestCreateReportsLines: creating or overwriting a 10-line file reports 10 lines affected.
func TestCreateReportsLines(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	ten := strings.Repeat("line\n", 10)
	r := e.post("shed_create_file", map[string]any{"zone": "storage", "path": "ten.txt", "content": ten}, nil)
	wantOK(t, r)
	if r.Data["lines_affected"] != float64(10) || !strings.Contains(r.Message, "10 line") {
		t.Fatalf("create: %s", r.raw)
	}
	r = e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "ten.txt", "overwrite": true, "content": "a\nb"}, nil)
	if r.Data["lines_affected"] != float64(2) {
		t.Fatalf("overwrite: %s", r.raw)
	}
}

// TestSpecShowsNoSentinels: the spec a model reads gives no sentinel defaults and no wrong
// bounds (number bounds are left out of the model's schema to save tokens; where they
// matter the description names them: shed_tree.depth 1-10), and content is required.
func TestSpecShowsNoSentinels(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Required   []string                  `json:"required"`
				Properties map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	e.spec(&doc)
	prop := func(schema, name string) map[string]any {
		p := doc.Components.Schemas[schema].Properties[name]
		if p == nil {
			t.Fatalf("%s.%s missing from the spec", schema, name)
		}
		return p
	}
	if p := prop("TreeInput", "depth"); p["minimum"] == float64(0) || !strings.Contains(fmt.Sprint(p["description"]), "1-10") {
		t.Fatalf("shed_tree.depth: %v", p)
	}
	for _, c := range []struct {
		schema, name string
		min          float64
	}{{"PatchBytesInput", "offset", 0}, {"PatchBytesInput", "length", 0},
		{"PatchTextInput", "line", 1}, {"PatchTextInput", "end_line", 1}} {
		if p := prop(c.schema, c.name); (p["minimum"] != nil && p["minimum"] != c.min) || p["default"] != nil {
			t.Fatalf("%s.%s: %v", c.schema, c.name, p)
		}
	}
	for _, s := range []string{"PatchTextInput", "PatchBytesInput"} {
		if !slices.Contains(doc.Components.Schemas[s].Required, "content") {
			t.Fatalf("%s: content not required: %v", s, doc.Components.Schemas[s].Required)
		}
	}
}

// TestParameterErrorsNameTheArgument: a decoding error's hint names the argument and the
// type expected, so the next call can be right.
func TestParameterErrorsNameTheArgument(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.post("shed_tree", map[string]any{"zone": "storage", "depth": "three"}, nil)
	wantError(t, r, "INVALID_PARAMETER")
	if !strings.Contains(r.Hint, "depth") || !strings.Contains(r.Hint, "integer") {
		t.Fatalf("%s", r.raw)
	}
	r = e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "ls", "args": map[string]any{"a": 1}}, nil)
	if r.Error != "INVALID_PARAMETER" || !strings.Contains(r.Hint, "args") || !strings.Contains(r.Hint, "array") {
		t.Fatalf("%s", r.raw)
	}
	r = e.post("shed_read", map[string]any{"zone": "storage"}, nil)
	if r.Error != "MISSING_PARAMETER" || !strings.Contains(r.Hint, "path") {
		t.Fatalf("%s", r.raw)
	}
}
