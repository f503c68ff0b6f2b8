package archive

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/archive/ziptest"
)

var lim = Limits{MaxEntries: 10000, MaxTotalBytes: 500 << 20, MaxFileBytes: 300 << 20, MaxRatio: 100, MaxDepth: 64, MaxNameLength: 1024}

// memDest keeps extracted files in memory, with their modes.
type memDest struct {
	files map[string]*bytes.Buffer
	exec  map[string]bool
	dirs  map[string]bool
}

func newMem() *memDest {
	return &memDest{files: map[string]*bytes.Buffer{}, exec: map[string]bool{}, dirs: map[string]bool{}}
}

func (m *memDest) MkdirAll(d string) error { m.dirs[d] = true; return nil }

func (m *memDest) Create(name string, exec bool) (io.WriteCloser, error) {
	if _, ok := m.files[name]; ok {
		return nil, fs.ErrExist
	}
	b := &bytes.Buffer{}
	m.files[name], m.exec[name] = b, exec
	return nopCloser{b}, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// build makes a zip file on disk from entries (or from gen) and opens it for reading.
func build(t *testing.T, gen func(io.Writer) error) (*os.File, int64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.zip")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := gen(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	fi, _ := r.Stat()
	return r, fi.Size()
}

func entries(es ...ziptest.Entry) func(io.Writer) error {
	return func(w io.Writer) error { return ziptest.Build(w, es...) }
}

func TestCleanName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, want string
		escape     bool // want a NameError with Escape
		invalid    bool // want a NameError without Escape
		limit      string
	}{
		{name: "a/b.txt", want: "a/b.txt"},
		{name: "./a//b/", want: "a/b"},
		{name: "../../x", escape: true},
		{name: "a/../../x", escape: true},
		{name: "a/../b", escape: true}, // zipinsecurepath: any ".." is refused
		{name: "/etc/passwd", escape: true},
		{name: `C:\x`, escape: true},
		{name: "C:/x", escape: true},
		{name: `a\..\..\x`, escape: true},
		{name: "a\x00b", invalid: true},
		{name: "a\nb", invalid: true},
		{name: "\xff\xfe", invalid: true},
		{name: "./", invalid: true},
		{name: strings.Repeat("d/", 1000) + "x", limit: "depth"},
		{name: strings.Repeat("n", 300), limit: "name_length"},
		{name: strings.Repeat(strings.Repeat("n", 250)+"/", 5), limit: "name_length"},
		{name: "e\u0301", want: "\u00e9"},
	} {
		t.Run(tc.name[:min(len(tc.name), 20)], func(t *testing.T) {
			got, err := cleanName(tc.name, lim)
			var ne *NameError
			var le *LimitError
			switch {
			case tc.escape || tc.invalid:
				if !errors.As(err, &ne) || ne.Escape != tc.escape {
					t.Fatalf("cleanName(%q) = %q, %v; want NameError escape=%v", tc.name, got, err, tc.escape)
				}
			case tc.limit != "":
				if !errors.As(err, &le) || le.Limit != tc.limit {
					t.Fatalf("cleanName = %v, want limit %s", err, tc.limit)
				}
			case err != nil || got != tc.want:
				t.Fatalf("cleanName(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
			}
		})
	}
}

func TestDecodeNameCP437(t *testing.T) {
	t.Parallel()
	if got := decodeName("caf\x82.txt", true); got != "café.txt" {
		t.Fatalf("got %q", got)
	}
	if got := decodeName("café.txt", false); got != "café.txt" {
		t.Fatalf("got %q", got)
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	tar := make([]byte, 512)
	copy(tar[257:], "ustar\x0000")
	for _, tc := range []struct {
		head []byte
		want string
	}{
		{nil, "empty"}, {[]byte("PK\x03\x04rest"), "zip"}, {[]byte("PK\x05\x06"), "zip"}, {[]byte{0x1f, 0x8b, 8}, "gzip"},
		{tar, "tar"}, {[]byte("BZh91AY"), "bzip2"}, {[]byte("%PDF-1.7"), "pdf"}, {[]byte("hello"), "unknown"},
	} {
		if got := Sniff(tc.head); got != tc.want {
			t.Errorf("Sniff(%q) = %s, want %s", tc.head[:min(len(tc.head), 8)], got, tc.want)
		}
	}
}

// TestOpenRefuses: every hostile archive is refused from the central directory, with the
// error type core maps to a code.
func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		gen   func(io.Writer) error
		check func(error) bool
	}{
		{"zip slip", entries(ziptest.Entry{Name: "ok.txt", Body: "x"}, ziptest.Entry{Name: "../../x", Body: "evil"}), isEscape},
		{"absolute", entries(ziptest.Entry{Name: "/abs", Body: "evil"}), isEscape},
		{"drive", entries(ziptest.Entry{Name: `C:\x`, Body: "evil"}), isEscape},
		{"backslash traversal", entries(ziptest.Entry{Name: `a\..\..\x`, Body: "evil"}), isEscape},
		{"NUL", entries(ziptest.Entry{Name: "a\x00.txt", Body: "evil"}), func(err error) bool {
			var ne *NameError
			return errors.As(err, &ne) && !ne.Escape
		}},
		{"1000-deep path", entries(ziptest.Entry{Name: strings.Repeat("d/", 1000) + "x", Body: "x"}), isLimit("depth")},
		{"100000 empty entries", func(w io.Writer) error { return ziptest.Many(w, 100_000) }, isLimit("entries")},
		{"Fifield overlapping entries", func(w io.Writer) error { return ziptest.Overlapped(w, 100, 4000) }, isLimit("overlap")},
		{"4 GB honest header", func(w io.Writer) error {
			return ziptest.Bomb(w, 16_646_000, ziptest.ZerosSize(16_646_000), 0)
		}, isLimit("ratio")},
		{"header claims 10 bytes for 1 GB", func(w io.Writer) error { return ziptest.Bomb(w, 4_000_000, 10, 0) }, isLimit("size_mismatch")},
		{"encrypted", entries(ziptest.Entry{Name: "s.txt", Body: "x", Flags: 1}), isFormat},
		{"unsupported method", entries(ziptest.Entry{Name: "b.txt", Body: "x", Method: 12}), isFormat},
		{"gzip", func(w io.Writer) error { _, err := w.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0}); return err }, isFormat},
		{"truncated", func(w io.Writer) error {
			var b bytes.Buffer
			_ = ziptest.Build(&b, ziptest.Entry{Name: "a.txt", Body: strings.Repeat("a", 5000)})
			_, err := w.Write(b.Bytes()[:b.Len()/2])
			return err
		}, isFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, size := build(t, tc.gen)
			_, err := Open(r, size, lim, nil)
			if !tc.check(err) {
				t.Fatalf("Open: %v (%T)", err, err)
			}
			if err != nil && err.Error() == "" {
				t.Fatal("empty message")
			}
		})
	}
}

func isEscape(err error) bool {
	var ne *NameError
	return errors.As(err, &ne) && ne.Escape
}

func isFormat(err error) bool {
	var fe *FormatError
	return errors.As(err, &fe)
}

func isLimit(limit string) func(error) bool {
	return func(err error) bool {
		var le *LimitError
		return errors.As(err, &le) && le.Limit == limit
	}
}

// TestExtractStopsBombsWhileStreaming: headers that lie (compressed data padded so the
// declared ratio looks harmless, or an entry longer than declared) pass Open; Extract stops
// them on the real bytes, long before they are written out.
func TestExtractStopsBombsWhileStreaming(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		gen           func(io.Writer) error
		limit         string
		maxWrittenMiB int64
	}{
		{"header claims 7 MB for 1 GB", func(w io.Writer) error { return ziptest.Bomb(w, 4_000_000, 7<<20, 0) }, "ratio", 2},
		{"padded compressed size hides a ratio bomb", func(w io.Writer) error { return ziptest.Bomb(w, 1_000_000, 250<<20, 2<<20) }, "ratio", 2},
		{"stored entry longer than declared", func(w io.Writer) error { return ziptest.Longer(w, 2<<20, 2<<20-1000) }, "size_mismatch", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, size := build(t, tc.gen)
			a, err := Open(r, size, lim, nil)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			st, err := a.Extract(context.Background(), newMem())
			if !isLimit(tc.limit)(err) {
				t.Fatalf("Extract: %v", err)
			}
			if st.Bytes > tc.maxWrittenMiB<<20 {
				t.Fatalf("%d bytes decompressed before the refusal", st.Bytes)
			}
		})
	}
}

// TestExtract: the ordinary entries are written with reduced modes; symlinks, special
// files, duplicates and case collisions are skipped, deterministically.
func TestExtract(t *testing.T) {
	t.Parallel()
	r, size := build(t, entries(
		ziptest.Entry{Name: "dir/"},
		ziptest.Entry{Name: "dir/a.txt", Body: "hello"},
		ziptest.Entry{Name: "run.sh", Body: "#!/bin/sh", Mode: 0o4755},
		ziptest.Entry{Name: "link", Body: "/etc", Mode: fs.ModeSymlink | 0o777},
		ziptest.Entry{Name: "link/passwd", Body: "through the link"},
		ziptest.Entry{Name: "fifo", Mode: fs.ModeNamedPipe | 0o644},
		ziptest.Entry{Name: "A.txt", Body: "upper"},
		ziptest.Entry{Name: "a.txt", Body: "lower"},
		ziptest.Entry{Name: "A.txt", Body: "again"},
		ziptest.Entry{Name: ".git/hooks/post-commit", Body: "#!/bin/sh\necho pwned"},
		ziptest.Entry{Name: "big.bin", Body: ziptest.Noise(3 << 20)},
	))
	a, err := Open(r, size, lim, func(p string) string {
		if strings.HasPrefix(p, ".git/") {
			return "git"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	d := newMem()
	st, err := a.Extract(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"dir/a.txt": "hello", "run.sh": "#!/bin/sh", "link/passwd": "through the link", "A.txt": "upper",
		"big.bin": ziptest.Noise(3 << 20)}
	if len(d.files) != len(want) {
		t.Fatalf("files %v", keys(d.files))
	}
	for k, v := range want {
		if d.files[k] == nil || d.files[k].String() != v {
			t.Errorf("%s = %v", k, d.files[k])
		}
	}
	if !d.exec["run.sh"] || d.exec["dir/a.txt"] {
		t.Errorf("exec bits: %v", d.exec)
	}
	if st.Files != 5 || st.Dirs != 1 {
		t.Errorf("stats %+v", st)
	}
	skips := map[string]string{}
	for _, e := range a.Entries {
		if e.Skip != "" {
			skips[e.Name] = e.Skip
		}
	}
	for _, n := range []string{"link", "fifo", "a.txt", ".git/hooks/post-commit"} {
		if skips[n] == "" {
			t.Errorf("%s not skipped: %v", n, skips)
		}
	}
}

func keys(m map[string]*bytes.Buffer) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestInspectListsEveryProblem: Inspect goes on past problems and reports each.
func TestInspectListsEveryProblem(t *testing.T) {
	t.Parallel()
	r, size := build(t, entries(
		ziptest.Entry{Name: "../x", Body: "a"},
		ziptest.Entry{Name: "/abs", Body: "b"},
		ziptest.Entry{Name: "ok.txt", Body: "c"},
	))
	a, warnings, err := Inspect(r, size, lim)
	if err != nil || len(warnings) != 2 || len(a.Entries) != 3 {
		t.Fatalf("Inspect: %v %v %d", err, warnings, len(a.Entries))
	}
}

func TestPlanAndCreateRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "src/sub"), 0o700))
	must(os.MkdirAll(filepath.Join(dir, "src/empty/deeper"), 0o700))
	must(os.WriteFile(filepath.Join(dir, "src/a.txt"), []byte("alpha"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "src/sub/b.sh"), []byte("echo"), 0o700))
	must(os.Symlink("/etc", filepath.Join(dir, "src/etc")))
	must(os.WriteFile(filepath.Join(dir, "src/skip.me"), []byte("x"), 0o600))
	src := Source{FS: os.DirFS(dir), Path: "src", EmptyDirs: true, Listed: 1, Skip: func(p string) string {
		if p == "src/skip.me" {
			return "excluded"
		}
		return ""
	}}
	p, err := PlanDir(context.Background(), src)
	must(err)
	if p.Files != 2 || len(p.Skipped) != 1 || p.SkippedCount != 2 || p.EmptyDirs != 2 {
		t.Fatalf("plan %+v", p)
	}
	var b bytes.Buffer
	wrote, err := Create(context.Background(), &b, src)
	must(err)
	if wrote.Files != p.Files || wrote.SkippedCount != p.SkippedCount || wrote.EmptyDirs != p.EmptyDirs || wrote.Bytes != p.Bytes {
		t.Fatalf("wrote %+v, planned %+v", wrote, p)
	}
	if int64(b.Len()) > p.MaxSize() {
		t.Fatalf("archive %d bytes over the planned maximum %d", b.Len(), p.MaxSize())
	}
	a, err := Open(bytes.NewReader(b.Bytes()), int64(b.Len()), lim, nil)
	must(err)
	d := newMem()
	_, err = a.Extract(context.Background(), d)
	must(err)
	if d.files["src/a.txt"].String() != "alpha" || !d.exec["src/sub/b.sh"] || !d.dirs["src/empty/deeper"] {
		t.Fatalf("round trip: %v %v %v", keys(d.files), d.exec, d.dirs)
	}
}
