package handlers_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// lineAnchor is the anchor of line n with text: "n:hh", hh two hex digits of its SHA-256.
func lineAnchor(n int, text string) string {
	sum := sha256.Sum256([]byte(text))
	return fmt.Sprintf("%d:%s", n, hex.EncodeToString(sum[:1]))
}

// TestReadWithAnchors: anchors=true shows each line as N:hh|text, the same hash for a CRLF
// line as for its LF twin, numbered from start_line.
func TestReadWithAnchors(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(zoneDir+"f.txt", "alpha\r\nbeta\ngamma")
	r := e.post("shed_read", map[string]any{"zone": "storage", "path": "f.txt", "anchors": true}, nil)
	wantOK(t, r)
	want := lineAnchor(1, "alpha") + "|alpha\r\n" + lineAnchor(2, "beta") + "|beta\n" + lineAnchor(3, "gamma") + "|gamma"
	if r.Data["content"] != want {
		t.Fatalf("content %q, want %q", r.Data["content"], want)
	}
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "f.txt", "anchors": true, "start_line": 2, "end_line": 2}, nil)
	if r.Data["content"] != lineAnchor(2, "beta")+"|beta\n" {
		t.Fatalf("a range: %q", r.Data["content"])
	}
}

// TestPatchTextAnchors: an anchor that still holds edits its line; one made stale by an
// insert above is ANCHOR_MISMATCH naming the line now and where the anchored line went
// (the retry with that anchor lands); duplicate hashes at the same distance are named as
// ambiguous; hostile anchors are INVALID_PARAMETER.
func TestPatchTextAnchors(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	lines := []string{"package main", "", "func a() {}", "func b() {}", "func c() {}"}
	e.write(zoneDir+"m.go", strings.Join(lines, "\n")+"\n")
	patch := func(anchor, content string) reply {
		return e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "m.go", "position": "replace", "anchor": anchor, "content": content}, nil)
	}
	wantOK(t, patch(lineAnchor(4, "func b() {}"), "func b() { return }"))
	if !strings.Contains(e.disk("m.go"), "\nfunc b() { return }\n") {
		t.Fatalf("anchored edit: %q", e.disk("m.go"))
	}
	// Another conversation inserts two lines above: line 5 is now "func a() {}".
	wantOK(t, e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "m.go", "position": "after", "line": 1, "content": "\nimport \"os\""}, nil))
	stale := lineAnchor(5, "func c() {}")
	r := patch(stale, "func c() { return }")
	wantError(t, r, "ANCHOR_MISMATCH")
	moved := lineAnchor(7, "func c() {}")
	if r.Details["line_now"] != lineAnchor(5, "func a() {}")+"|func a() {}" ||
		r.Details["nearest"] != moved+"|func c() {}" || !strings.Contains(r.Hint, `anchor="`+moved+`"`) {
		t.Fatalf("stale anchor: %s", r.raw)
	}
	before := e.disk("m.go")
	wantOK(t, patch(moved, "func c() { return }"))
	if got := e.disk("m.go"); got != strings.Replace(before, "func c() {}", "func c() { return }", 1) {
		t.Fatalf("retry with the nearest anchor: %q", got)
	}
	// Duplicate hashes: two equal lines at the same distance from a stale anchor.
	e.write(zoneDir+"d.txt", "x\nsame\ny\nsame\nz\n")
	r = e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "d.txt", "position": "replace", "anchor": lineAnchor(3, "same"), "content": "q"}, nil)
	wantError(t, r, "ANCHOR_MISMATCH")
	if !strings.Contains(r.Hint, "Several lines") || e.disk("d.txt") != "x\nsame\ny\nsame\nz\n" {
		t.Fatalf("ambiguous: %s", r.raw)
	}
	r = e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "d.txt", "position": "after", "anchor": lineAnchor(99, "same"), "content": "q"}, nil)
	wantError(t, r, "ANCHOR_MISMATCH")
	for _, bad := range []string{"3", "x:ab", "0:ab", "3:abc", "-1:ab", "3:zz", strings.Repeat("9", 40) + ":ab"} {
		r := e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "d.txt", "position": "after", "anchor": bad, "content": "q"}, nil)
		wantError(t, r, "INVALID_PARAMETER")
	}
	wantError(t, e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "d.txt", "position": "after", "anchor": "1:ab", "line": 1, "content": "q"}, nil), "INVALID_PARAMETER")
}
