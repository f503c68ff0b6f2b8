package pages

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSlug: a title becomes a safe, short file name part whatever it holds.
func TestSlug(t *testing.T) {
	cases := []struct{ title, want string }{
		{"Sales report 2026", "sales-report-2026"}, {"../../x", "x"},
		{"<script>alert(1)</script>", "script-alert-1-script"},
		{"Étude: coûts / bénéfices", "étude-coûts-bénéfices"}, {"...", "page"}, {"a\x00b\u202ec", "a-b-c"},
	}
	for _, c := range cases {
		if got := slug(c.title); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.title, got, c.want)
		}
	}
	long := slug(strings.Repeat("é", 100))
	if len(long) > 48 || !utf8.ValidString(long) {
		t.Errorf("long slug %q (%d bytes)", long, len(long))
	}
}
