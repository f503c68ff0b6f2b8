package files

import "testing"

// TestCompleteRunes: a character cut by the end of a buffer is left for the next piece.
func TestCompleteRunes(t *testing.T) {
	t.Parallel()
	b := []byte("ab✓")
	for n, want := range map[int]int{5: 5, 4: 2, 3: 2, 2: 2, 0: 0} {
		if got := completeRunes(b[:n]); got != want {
			t.Errorf("completeRunes(%q) = %d, want %d", b[:n], got, want)
		}
	}
	if got := completeRunes([]byte("a\xff")); got != 2 {
		t.Errorf("an invalid last byte counts as complete: %d", got)
	}
}
