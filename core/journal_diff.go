package core

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Line counts and diffs of the journal (issue 36), over bounded inputs: a change counts its
// lines only when both sides are text of at most lineLimit bytes, and a diff shown to the
// model stops at diffLimit bytes.
const (
	lineLimit = 256 << 10
	diffLimit = 16 << 10
	// diffContext is the unchanged lines shown around each change (as diff -u).
	diffContext = 3
)

// isText says whether b looks like text: no NUL in its first 8 KiB (as git decides).
func isText(b []byte) bool { return bytes.IndexByte(b[:min(len(b), 8<<10)], 0) < 0 }

// lineOps is the line diff of a and b: each op with its lines.
func lineOps(a, b []byte) []diffmatchpatch.Diff {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(string(a), string(b))
	return dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
}

// lineDelta counts the lines b adds to a and removes from it.
func lineDelta(a, b []byte) (added, removed int64) {
	for _, d := range lineOps(a, b) {
		n := int64(strings.Count(d.Text, "\n"))
		if !strings.HasSuffix(d.Text, "\n") && d.Text != "" {
			n++
		}
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			added += n
		case diffmatchpatch.DiffDelete:
			removed += n
		}
	}
	return added, removed
}

// unifiedDiff is the unified diff of a (before) and b (after) of p, cut at diffLimit bytes
// (cut says so).
func unifiedDiff(p string, a, b []byte) (diff string, cut bool) {
	type line struct {
		op   byte
		text string
	}
	var all []line
	for _, d := range lineOps(a, b) {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			op = '+'
		case diffmatchpatch.DiffDelete:
			op = '-'
		}
		for l := range strings.SplitAfterSeq(d.Text, "\n") {
			if l != "" {
				all = append(all, line{op, strings.TrimSuffix(l, "\n")})
			}
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", p, p)
	oldNo, newNo := 1, 1
	for i := 0; i < len(all); {
		if all[i].op == ' ' {
			i, oldNo, newNo = i+1, oldNo+1, newNo+1
			continue
		}
		// A hunk: from diffContext lines before the change to diffContext after the last
		// change that is at most 2*diffContext lines from the next.
		start := max(i-diffContext, 0)
		end, gap := i, 0
		for j := i; j < len(all) && gap <= 2*diffContext; j++ {
			if all[j].op == ' ' {
				gap++
			} else {
				end, gap = j, 0
			}
		}
		stop := min(end+diffContext+1, len(all))
		o0, n0 := oldNo-(i-start), newNo-(i-start)
		var body strings.Builder
		on, nn := 0, 0
		for _, l := range all[start:stop] {
			body.WriteByte(l.op)
			body.WriteString(l.text)
			body.WriteByte('\n')
			if l.op != '+' {
				on++
			}
			if l.op != '-' {
				nn++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n%s", o0, on, n0, nn, body.String())
		for _, l := range all[i:stop] {
			if l.op != '+' {
				oldNo++
			}
			if l.op != '-' {
				newNo++
			}
		}
		i = stop
		if out.Len() > diffLimit {
			return out.String()[:diffLimit], true
		}
	}
	return out.String(), false
}
