package archive

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/fileshed/fileshed/internal/testtool"
)

// heapGrowth is how much more heap is live after op than before (op's result kept alive
// by op itself until it returns the value to keep).
func heapGrowth(op func() any) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := op()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// TestPlanHoldsNothingPerFile (issue 24 item 6): planning a zip listed every file (and
// every folder, for the empty ones): about 108 MB of server memory per 100,000 entries,
// for anyone holding a folder link. The plan now counts as the walk streams.
func TestPlanHoldsNothingPerFile(t *testing.T) {
	dir := testtool.MemDir(t) // 20,000 entries: tmpfs makes and removes them in a fraction of ext4's time
	for d := range 20 {
		sub := filepath.Join(dir, "src", fmt.Sprintf("folder-%02d", d))
		if err := os.MkdirAll(filepath.Join(sub, "empty"), 0o700); err != nil {
			t.Fatal(err)
		}
		for f := range 1000 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file-%04d.txt", f)), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	src := Source{FS: os.DirFS(dir), Path: "src", EmptyDirs: true, Listed: 50}
	var p *Plan
	grew := heapGrowth(func() any {
		var err error
		if p, err = PlanDir(context.Background(), src); err != nil {
			t.Fatal(err)
		}
		return p
	})
	if p.Files != 20000 || p.EmptyDirs != 20 {
		t.Fatalf("plan %+v", p)
	}
	if grew > 256<<10 {
		t.Fatalf("a plan of 20,000 files holds %d bytes, want < 256 KiB", grew)
	}
}

// TestWriterHoldsOnlyTheCentralDirectory: after 20,000 entries the writer holds their
// central directory records (46 bytes, the name, 9 bytes of time), not archive/zip's
// FileHeaders (several hundred bytes each: 50 MB of server memory for a 100,000-file ?zip).
func TestWriterHoldsOnlyTheCentralDirectory(t *testing.T) {
	const n = 20000
	var w *Writer
	grew := heapGrowth(func() any {
		w = NewWriter(io.Discard)
		for i := range n {
			f, err := w.File(fmt.Sprintf("dir/file-%05d.txt", i), time.Now(), 0o644)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.WriteString(f, "content")
		}
		return w
	})
	// Beside the records: one compressor (about 1 MiB) and the write buffer.
	if perRecord := 46 + len("dir/file-00000.txt") + 9; grew > int64(n*perRecord*3/2+3<<19) {
		t.Fatalf("%d entries hold %d bytes (%d per entry), want about %d per entry and 1.5 MiB", n, grew, grew/n, perRecord)
	}
}
