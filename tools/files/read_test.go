package files

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core"
)

// readService is a real Service on a temporary storage directory, with a 50 MB text file
// of 1,000,000 numbered lines (52 bytes each, "line 0000001 ...\n") in the caller's Storage.
func readService(t testing.TB) (*Tools, core.Caller) {
	t.Helper()
	s, base := testService(t, nil)
	c, err := core.NewCaller("local", "", "", "", "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "users/local/Storage/data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := 1; i <= 1_000_000; i++ {
		fmt.Fprintf(w, "line %07d %s\n", i, strings.Repeat("x", 38))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return s, c
}

// TestReadLargeFileBoundedMemory: reading 100 lines, the last lines, or the whole capped
// text of a 50 MB file allocates a small, fixed amount, not the file.
func TestReadLargeFileBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 50 MB file")
	}
	s, c := readService(t)
	ctx := context.Background()
	cases := []struct {
		name       string
		start, end int64
		first      string
	}{
		{"100 lines in the middle", 500_000, 500_099, "line 0500000 "},
		{"last lines", 999_990, 0, "line 0999990 "},
		{"whole file capped", 1, 0, "line 0000001 "},
		{"first line", 1, 1, "line 0000001 "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := ReadInput{ZoneArgs: core.ZoneArgs{Zone: "storage"}, Path: "big.txt", StartLine: tc.start, EndLine: tc.end}
			var res core.Result
			var err error
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res, err = s.Read(ctx, c, in)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			d := res.Data.(readResult)
			if !strings.HasPrefix(d.Content, tc.first) || d.TotalLines == nil || *d.TotalLines != 1_000_000 {
				t.Fatalf("content %.40q, total %v", d.Content, d.TotalLines)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %d KB allocated for a %d MB file", tc.name, alloc>>10, d.Size>>20)
			if alloc > 2<<20 {
				t.Fatalf("%d bytes allocated reading a 50 MB file", alloc)
			}
		})
	}
}

// BenchmarkReadRange measures reading 100 lines from the middle of a 50 MB file.
func BenchmarkReadRange(b *testing.B) {
	s, c := readService(b)
	in := ReadInput{ZoneArgs: core.ZoneArgs{Zone: "storage"}, Path: "big.txt", StartLine: 500_000, EndLine: 500_099}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Read(context.Background(), c, in); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHexdumpFormat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in     string
		offset int64
		want   string
	}{
		{"", 0, ""},
		{"A", 0, "00000000: 41                                       A"},
		{"orig\nappended\n", 0, "00000000: 6f72 6967 0a61 7070 656e 6465 640a       orig.appended."},
		{"0123456789abcdef\x00\xff", 16, "00000010: 3031 3233 3435 3637 3839 6162 6364 6566  0123456789abcdef\n00000020: 00ff                                     .."},
	}
	for _, tc := range cases {
		if got := hexdump([]byte(tc.in), tc.offset); got != tc.want {
			t.Errorf("hexdump(%q):\n%q\nwant\n%q", tc.in, got, tc.want)
		}
	}
}
