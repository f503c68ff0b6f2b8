package textcap

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLooksBinary(t *testing.T) {
	cases := []struct {
		name   string
		sample string
		want   bool
	}{
		{"empty", "", false},
		{"plain text", "hello\nworld\n", false},
		{"whitespace controls", "a\tb\r\nc\fd\ve\n", false},
		{"ansi colours", strings.Repeat("\x1b[1mbold\x1b[0m\n", 50), false},
		{"utf-8", "héllo ✓ 日本", false},
		{"latin-1 bytes are not controls", "caf\xe9 cr\xe8me", false},
		{"one NUL", "abc\x00def", true},
		{"utf-16", "h\x00i\x00", true},
		{"exactly 5% controls", strings.Repeat("abcdefghijklmnopqrs\x01", 10), false},
		{"over 5% controls", strings.Repeat("abcdefghijklmnopqr\x01", 10), true},
		{"DEL counts", strings.Repeat("abcdefghi\x7f", 10), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := LooksBinary([]byte(tc.sample)); got != tc.want {
				t.Fatalf("LooksBinary(%q) = %v", tc.sample, got)
			}
		})
	}
}

func TestLineEndings(t *testing.T) {
	for in, want := range map[string]string{
		"": "none", "abc": "none", "a\nb\n": "lf", "a\r\nb\r\n": "crlf", "a\rb\r": "cr",
		"a\r\nb\n": "mixed", "a\rb\n": "mixed", "a\r\nb\r": "mixed",
	} {
		if got := LineEndings([]byte(in)); got != want {
			t.Errorf("LineEndings(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestValidText(t *testing.T) {
	cases := []struct {
		in, want string
		bad      int
	}{
		{"plain", "plain", 0},
		{"é✓", "é✓", 0},
		{"caf\xe9", "caf\uFFFD", 1},
		{"\xff\xfe\xfd", "\uFFFD\uFFFD\uFFFD", 3},
		{"cut \xe2\x9c", "cut \uFFFD\uFFFD", 2},
		{"overlong \xc0\xaf", "overlong \uFFFD\uFFFD", 2},
	}
	for _, tc := range cases {
		got, bad := ValidText([]byte(tc.in))
		if got != tc.want || bad != tc.bad {
			t.Errorf("ValidText(%q) = %q, %d; want %q, %d", tc.in, got, bad, tc.want, tc.bad)
		}
	}
}

// TestHeadTailKeepsEnds: whatever the write pattern, the kept head is a prefix of the
// stream, the kept tail a suffix, the cut accounts for every byte and newline, and nothing
// exceeds the limit.
func TestHeadTailKeepsEnds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, limit := range []int{2, 10, 100, 1000} {
		for _, size := range []int{0, 1, limit - 1, limit, limit + 1, 3 * limit, 50 * limit} {
			var stream []byte
			for len(stream) < size {
				if rng.IntN(5) == 0 {
					stream = append(stream, '\n')
				} else {
					stream = append(stream, "aé✓"[rng.IntN(3)])
				}
			}
			stream = stream[:size]
			h := NewHeadTail(limit)
			for rest := stream; len(rest) > 0; {
				k := min(len(rest), 1+rng.IntN(2*limit))
				if n, err := h.Write(rest[:k]); n != k || err != nil {
					t.Fatal(n, err)
				}
				rest = rest[k:]
			}
			head, tail, cut := h.Parts()
			if h.Total() != int64(size) || h.Truncated() != (size > limit) {
				t.Fatalf("limit %d size %d: total %d truncated %v", limit, size, h.Total(), h.Truncated())
			}
			if !h.Truncated() {
				if !bytes.Equal(head, stream) || tail != nil {
					t.Fatalf("limit %d size %d: untruncated output differs", limit, size)
				}
				continue
			}
			if !bytes.HasPrefix(stream, head) || !bytes.HasSuffix(stream, tail) || len(head)+len(tail) > limit {
				t.Fatalf("limit %d size %d: head %q tail %q", limit, size, head, tail)
			}
			middle := stream[len(head) : len(stream)-len(tail)]
			if cut.Bytes != int64(len(middle)) || cut.CutNewlines != int64(bytes.Count(middle, []byte{'\n'})) ||
				cut.HeadNewlines != int64(bytes.Count(head, []byte{'\n'})) {
				t.Fatalf("limit %d size %d: cut %+v, middle %q", limit, size, cut, middle)
			}
		}
	}
}

// TestHeadTailCutsOnBoundaries: a line boundary near the cut wins; otherwise the cut never
// splits a UTF-8 character.
func TestHeadTailCutsOnBoundaries(t *testing.T) {
	h := NewHeadTail(100)
	_, _ = h.Write([]byte(strings.Repeat("0123456789\n", 50)))
	got := h.String("advice")
	// Head 60 bytes ends on line 5; the 40-byte tail starts mid-line 47, moved to line 48.
	want := strings.Repeat("0123456789\n", 5) + "\n[... 462 bytes (42 lines) cut: advice ...]\n" + strings.Repeat("0123456789\n", 3)
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	h = NewHeadTail(100)
	_, _ = h.Write([]byte(strings.Repeat("✓", 200)))
	head, tail, cut := h.Parts()
	if !utf8.Valid(head) || !utf8.Valid(tail) || cut.Lines != 1 || cut.Bytes != int64(600-len(head)-len(tail)) {
		t.Fatalf("rune cut: %q | %q %+v", head, tail, cut)
	}
	s := h.String("")
	if strings.ContainsRune(s, utf8.RuneError) || !strings.Contains(s, "[... ") {
		t.Fatalf("String: %q", s)
	}
}

// TestHeadTailBoundedMemory: a stream of 64 MB through a 1000-byte cap allocates O(cap).
func TestHeadTailBoundedMemory(t *testing.T) {
	chunk := bytes.Repeat([]byte("some log line\n"), 4096)
	allocs := testing.AllocsPerRun(3, func() {
		h := NewHeadTail(1000)
		for range (64 << 20) / len(chunk) {
			_, _ = h.Write(chunk)
		}
		_, _, _ = h.Parts()
	})
	if allocs > 10 {
		t.Fatalf("%v allocations for a 64 MB stream", allocs)
	}
}

// TestLooksBinaryCountsTheControlBytes: the table LooksBinary counts with holds exactly the
// control bytes it names (every byte value, judged alone and among text).
func TestLooksBinaryCountsTheControlBytes(t *testing.T) {
	for v := range 256 {
		b := byte(v)
		control := (b < 0x20 && b != '\t' && b != '\n' && b != '\v' && b != '\f' && b != '\r' && b != 0x1b) || b == 0x7f
		if got := LooksBinary([]byte{b}); got != control && b != 0 {
			t.Errorf("LooksBinary(%#x) = %v, want %v", b, got, control)
		}
		text := append([]byte(strings.Repeat("a", 19)), b) // one in 20: at the 5% limit, text
		if LooksBinary(text) != (b == 0) {
			t.Errorf("one %#x among 19 letters: binary = %v", b, LooksBinary(text))
		}
	}
}
