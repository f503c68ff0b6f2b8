package handlers_test

import (
	"strings"
	"testing"
)

// TestGoldenSearch pins the answers of shed_search: matches in two zones with a long line
// cut around its match and a binary skipped, a page cut by the answer's budget (next_offset),
// and a names-only search.
func TestGoldenSearch(t *testing.T) {
	e := start(t, map[string]string{"FILESHED_MAX_OUTPUT_DEFAULT": "1000"})
	e.write(zoneDir+"notes/a.txt", "first line\nthe Needle here\n"+strings.Repeat("x", 300)+" needle "+strings.Repeat("y", 300)+"\n")
	e.write(zoneDir+"notes/needle.md", "no match inside\n")
	e.write(zoneDir+"bin.dat", "needle\x00")
	e.write("users/local/Documents/data/d.txt", "a needle in documents\n")
	e.write(zoneDir+"notes/many.txt", strings.Repeat("one more line\n", 40))
	pinGolden(t, "search_two_zones", e.post("shed_search", map[string]any{"query": "needle"}, nil), nil)
	pinGolden(t, "search_next_offset", e.post("shed_search", map[string]any{"query": "more", "zone": "storage", "offset": 3}, nil), nil)
	pinGolden(t, "search_names_only", e.post("shed_search", map[string]any{"query": "NOTES", "names_only": true}, nil), nil)
}
