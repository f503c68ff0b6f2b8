package transfer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core/confine"
)

func TestImportName(t *testing.T) {
	cases := []struct{ in, id, want string }{
		{"Report.pdf", "f1", "Report.pdf"},
		{"../../x", "f1", "x"},
		{"a/b/", "f1", "b"},
		{`..\..\evil.exe`, "f1", "evil.exe"},
		{".git", "f1", "git"},
		{".fileshed-tmp-AAAAAAAAAAAAAAAAAAAAAAAAAA", "f1", "fileshed-tmp-AAAAAAAAAAAAAAAAAAAAAAAAAA"},
		{"-rf", "f1", "rf"},
		{" - .x", "f1", "x"},
		{".", "f1", "file-f1"},
		{"..", "../../auths", "file-auths"},
		{"", "", "upload"},
		{"\x00\n", "f:1", "file-f1"},
		{"a\tb", "f1", "a_b"},
		{"bad\xffutf8", "f1", "bad_utf8"},
		{"e\u0301", "f1", "\u00e9"},
	}
	for _, c := range cases {
		if got := importName(c.in, c.id); got != c.want {
			t.Errorf("importName(%q, %q) = %q, want %q", c.in, c.id, got, c.want)
		}
	}
	for _, in := range []string{strings.Repeat("a", 300) + ".txt", strings.Repeat("日", 100) + ".tar.gz", strings.Repeat("x", 250) + "." + strings.Repeat("y", 40)} {
		got := importName(in, "f1")
		if len(got) > maxImportName || !utf8.ValidString(got) {
			t.Errorf("importName(%d bytes) = %d bytes, valid UTF-8 %v", len(in), len(got), utf8.ValidString(got))
		}
		if c, err := confine.Clean(got); err != nil || c != got {
			t.Errorf("%q is not a clean name: %v", got, err)
		}
		if strings.HasSuffix(in, ".txt") && !strings.HasSuffix(got, ".txt") || strings.HasSuffix(in, ".gz") && !strings.HasSuffix(got, ".gz") {
			t.Errorf("extension lost: %q", got)
		}
		if len(dedupeName(got, 999)) > confine.MaxNameLen {
			t.Errorf("a deduplicated name exceeds NAME_MAX")
		}
	}
}

func TestDedupeName(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"Report.pdf", 1, "Report.pdf"},
		{"Report.pdf", 2, "Report (2).pdf"},
		{"archive.tar.gz", 3, "archive.tar (3).gz"},
		{"README", 2, "README (2)"},
		{"x.", 2, "x (2)."},
	} {
		if got := dedupeName(c.in, c.n); got != c.want {
			t.Errorf("dedupeName(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
