package files

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core"
)

// streamEdit runs edit e through the streamed path (planText, then its producer).
func streamEdit(t *testing.T, e textEdit, text, content string) (string, int, int, error) {
	p, err := planText(strings.NewReader(text), nil, core.Target{Size: int64(len(text)), Shown: "f.txt"}, e, content)
	if err != nil {
		return "", 0, 0, err
	}
	var b bytes.Buffer
	if err := p.produce(&b); err != nil {
		t.Fatalf("producer: %v", err)
	}
	if int64(b.Len()) != p.size {
		t.Fatalf("planned %d bytes, wrote %d", p.size, b.Len())
	}
	return b.String(), p.affected, p.matches, nil
}

// TestTextEditMatchesReference: every line, range and pattern edit streamed gives the text,
// counts and errors of the in-memory edit it replaced, on texts with and without a final
// newline, CRLF, mixed and CR-only line endings, empty lines, and lines longer than the
// read buffer.
func TestTextEditMatchesReference(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 50<<10) // 100 KiB: longer than the read buffer
	texts := []string{"", "a", "a\n", "\n", "\n\n", "a\nb", "a\nb\n", "a\r\nb\r\n", "a\r\nb", "a\r\nb\nc", "a\rb\rc",
		"x\r", "abc\nabd\n\nabc", "one\ntwo\nthree\nfour\n", long + "\nb\n" + long, "b\r\n" + long + "\r\n"}
	contents := []string{"", "x", "x\r\n", "p\nq", `\1-\g<0>`}
	var edits []textEdit
	for _, pos := range []string{"before", "after", "replace"} {
		for line := 1; line <= 5; line++ {
			for _, end := range []int{0, line + 1, 9} {
				if end > 0 && pos != "replace" {
					continue
				}
				edits = append(edits, textEdit{position: pos, line: line, endLine: end})
			}
		}
		for _, p := range []string{`^a`, `b$`, `.`, `^$`, `zz`, `(b)|(c)`, `é`} {
			for _, all := range []bool{false, true} {
				re, err := compilePattern(p, "m")
				if err != nil {
					t.Fatal(err)
				}
				edits = append(edits, textEdit{position: pos, re: re, pattern: p, matchAll: all})
			}
		}
	}
	for _, text := range texts {
		eol := eolOf(text)
		for _, content := range contents {
			if len(text) > 64<<10 && content != "p\nq" {
				continue // long lines: one content is enough
			}
			for _, e := range edits {
				name := fmt.Sprintf("%s line=%d end=%d pattern=%q all=%v text=%.20q content=%q", e.position, e.line, e.endLine, e.pattern, e.matchAll, text, content)
				want, wa, wm, werr := e.refApply(text, withEOL(content, eol), eol)
				got, ga, gm, gerr := streamEdit(t, e, text, content)
				if fmt.Sprint(werr) != fmt.Sprint(gerr) {
					t.Fatalf("%s: error %v, reference %v", name, gerr, werr)
				}
				if got != want || ga != wa || gm != wm {
					t.Fatalf("%s: got %.60q (%d, %d), reference %.60q (%d, %d)", name, got, ga, gm, want, wa, wm)
				}
			}
		}
	}
}

// TestTextEditRefusesBinary: a NUL or invalid UTF-8 anywhere (also split between two reads)
// is INVALID_FORMAT before anything is written.
func TestTextEditRefusesBinary(t *testing.T) {
	t.Parallel()
	e := textEdit{position: "after", line: 1}
	for _, text := range []string{"a\x00b\n", "a\nb\xff", strings.Repeat("a", 64<<10-1) + "\xe2\x82", "\xe2\n\x82\xac"} {
		_, _, _, err := streamEdit(t, e, text, "x")
		if ce, ok := core.AsError(err); !ok || ce.Code != core.InvalidFormat {
			t.Errorf("%.20q: %v, want INVALID_FORMAT", text, err)
		}
	}
	if _, _, _, err := streamEdit(t, e, strings.Repeat("a", 64<<10-1)+"\xe2\x82\xac\n", "x"); err != nil {
		t.Errorf("a character split between two reads: %v", err)
	}
}

// TestWithEOLMatchesReplaceAll: the one-pass withEOL gives what the two ReplaceAll did.
func TestWithEOLMatchesReplaceAll(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "a", "\n", "\r\n", "\r", "\r\r\n", "\n\r", "\n\n", "a\nb\r\nc\rd\n", "\r\n\n\r\r"} {
		for _, eol := range []string{"\n", "\r\n"} {
			want := s
			if eol == "\r\n" && strings.Contains(s, "\n") {
				want = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", eol)
			}
			if got := withEOL(s, eol); got != want {
				t.Errorf("withEOL(%q, %q) = %q, want %q", s, eol, got, want)
			}
		}
	}
}

// swapReader is a file whose content a command rewrites in place between two reads.
type swapReader struct{ b []byte }

func (s *swapReader) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(s.b).ReadAt(p, off)
}

// TestStreamedEditOfAFileChangedMeanwhile: when the second read finds other lines than the
// first counted, the producer fails with core.ErrChangedMeanwhile (FILE_LOCKED in the
// answer), never a result built from two different files. (A change the producer cannot
// see, such as bytes appended past what it reads, is the kernel's check before the rename:
// core's TestWriteOfAFileChangedMeanwhileIsFileLocked.)
func TestStreamedEditOfAFileChangedMeanwhile(t *testing.T) {
	for _, after := range []string{"a\nc\n", "a\nb\n\n\n"} {
		f := &swapReader{[]byte("a\nb\nc\n")}
		p, err := planText(f, nil, core.Target{Size: int64(len(f.b)), Shown: "f.txt"}, textEdit{position: "after", line: 1}, "x")
		if err != nil {
			t.Fatal(err)
		}
		f.b = []byte(after)
		if err := p.produce(&bytes.Buffer{}); !errors.Is(err, core.ErrChangedMeanwhile) {
			t.Errorf("rewritten as %q: %v", after, err)
		}
	}
}
