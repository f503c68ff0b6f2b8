package files

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core"
)

// TestConvertEOLStreamMatchesReference: the streamed conversion counts and writes what
// the in-memory one did, also when a "\r\n" or a character is split between two reads.
func TestConvertEOLStreamMatchesReference(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("x", 64<<10-1)
	for _, text := range []string{"", "a", "a\n", "a\r\n", "a\r", "\r\n\r\n", "\n\r", "a\rb\nc\r\nd", "\r\r\n\n",
		pad + "\r\nb", pad + "\r\r\n", pad + "é\r\n", pad + "\n\r", "x" + pad + "\r"} {
		crlf, lf, cr, err := scanEOL(strings.NewReader(text), nil, core.Target{Shown: "f"})
		if err != nil {
			t.Fatalf("%.20q: %v", text, err)
		}
		if crlf != strings.Count(text, "\r\n") || lf != strings.Count(text, "\n") || cr != strings.Count(text, "\r") {
			t.Errorf("%.20q: counts %d %d %d", text, crlf, lf, cr)
		}
		unix := strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
		for dos, want := range map[bool]string{false: unix, true: strings.ReplaceAll(unix, "\n", "\r\n")} {
			var b bytes.Buffer
			if err := writeEOL(&b, strings.NewReader(text), dos, int64(len(want))); err != nil || b.String() != want {
				t.Errorf("%.20q dos=%v: %.30q, %v", text, dos, b.String(), err)
			}
		}
	}
	for _, text := range []string{"a\x00", pad + "\xe2\x82", "\xff\n"} {
		if _, _, _, err := scanEOL(strings.NewReader(text), nil, core.Target{Shown: "f"}); err == nil {
			t.Errorf("%.20q: accepted", text)
		}
	}
}
