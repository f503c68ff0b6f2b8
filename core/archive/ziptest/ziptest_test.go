package ziptest

import (
	"bytes"
	"compress/flate"
	"io"
	"testing"
)

// TestZerosExpandsExactly: the hand-made deflate stream is valid and expands to exactly
// ZerosSize zero bytes, for run counts on both sides of the 8-run pattern.
func TestZerosExpandsExactly(t *testing.T) {
	for _, runs := range []int64{0, 1, 7, 8, 9, 1000, 12345} {
		var b bytes.Buffer
		if _, err := Zeros(&b, runs); err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(flate.NewReader(&b))
		if err != nil {
			t.Fatalf("runs %d: %v", runs, err)
		}
		if int64(len(out)) != ZerosSize(runs) || bytes.ContainsFunc(out, func(r rune) bool { return r != 0 }) {
			t.Fatalf("runs %d: %d bytes, want %d zeros", runs, len(out), ZerosSize(runs))
		}
	}
}
