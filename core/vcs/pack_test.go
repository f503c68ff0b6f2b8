package vcs

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/internal/testtool"
)

// objectsSize is the size of the regular files under the history folder (what core's
// reconcile measures).
func objectsSize(t testing.TB, z zone) int64 {
	t.Helper()
	return testtool.RegularSize(t, HistoryDir(z.gitDir))
}

// randomText is n bytes of base64 text that no other call shares.
func randomText(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)[:n]
}

// commitLocked commits paths under the lock and returns what the commit added (Written).
func commitLocked(t *testing.T, r *Repo, paths ...string) int64 {
	t.Helper()
	l, err := r.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	before := l.Written()
	if _, err := l.CommitPaths(paths, Signature{Name: "u"}, "m"); err != nil {
		t.Fatal(err)
	}
	return l.Written() - before
}

// TestWrittenIsWhatCommitsAdd: the bytes Written reports around a commit are exactly the
// growth of the history folder, for small objects (written from memory), large ones
// (streamed through a temporary file), an unchanged file (nothing) and a removal (trees
// and the commit only).
func TestWrittenIsWhatCommitsAdd(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	r := z.open(t)
	steps := []struct {
		name   string
		change func()
		path   string
	}{
		{"Small", func() { z.write(t, "a.txt", "hello") }, "a.txt"},
		{"Nested", func() { z.write(t, "d/e/b.txt", randomText(10_000)) }, "d/e/b.txt"},
		{"Large", func() { z.write(t, "big.txt", randomText(600<<10)) }, "big.txt"},
		{"LargeAgain", func() { z.write(t, "big.txt", randomText(600<<10)) }, "big.txt"},
		{"Unchanged", func() {}, "a.txt"},
		{"Removed", func() { z.remove(t, "d/e/b.txt") }, "d/e/b.txt"},
	}
	for _, s := range steps {
		before := objectsSize(t, z)
		s.change()
		got := commitLocked(t, r, s.path)
		if want := objectsSize(t, z) - before; got != want {
			t.Fatalf("%s: Written grew by %d, the history folder by %d", s.name, got, want)
		}
		if s.name == "Unchanged" && got != 0 {
			t.Fatalf("an unchanged file added %d bytes", got)
		}
	}
}

// TestPackShrinksHistoryAndKeepsIt: six versions of a 300 KB file that differ by a line are
// six whole compressed copies; packed, they are one copy and deltas. Every version reads
// back after the pack, through this Repo and through another one that read the old layout
// before (another process sharing the storage: it must see the pack, not the removed loose
// objects), and commits go on.
func TestPackShrinksHistoryAndKeepsIt(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	r := z.open(t)
	base := randomText(300 << 10)
	for i := range 6 {
		z.write(t, "doc.txt", fmt.Sprintf("v%d\n%s", i, base))
		commitLocked(t, r, "doc.txt")
	}
	other, err := Open(z.gitDir, z.work)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.FileAt("HEAD~5", "doc.txt"); err != nil {
		t.Fatal(err)
	}
	loose := objectsSize(t, z)
	l, err := r.Lock()
	if err != nil {
		t.Fatal(err)
	}
	err = l.Pack(context.Background())
	l.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	packed := objectsSize(t, z)
	if packed*3 > loose {
		t.Fatalf("packing kept %d of %d bytes", packed, loose)
	}
	if looseLeft, _ := filepath.Glob(filepath.Join(z.gitDir, "objects", "??", "*")); len(looseLeft) != 0 {
		t.Fatalf("loose objects left: %d", len(looseLeft))
	}
	for _, repo := range []*Repo{r, other} {
		for i := range 6 {
			got, err := repo.FileAt(fmt.Sprintf("HEAD~%d", 5-i), "doc.txt")
			if err != nil || !strings.HasPrefix(string(got), fmt.Sprintf("v%d\n", i)) || len(got) != len(base)+3 {
				t.Fatalf("version %d after the pack: %v", i, err)
			}
		}
	}
	// New objects land in fan-out folders this Repo made before and the pack removed.
	var paths []string
	for i := range 40 {
		z.write(t, fmt.Sprintf("new/%d.txt", i), randomText(100+i))
		paths = append(paths, fmt.Sprintf("new/%d.txt", i))
	}
	z.write(t, "doc.txt", randomText(300<<10))
	commitLocked(t, r, append(paths, "doc.txt")...)
	z.write(t, "doc.txt", "after the pack")
	commitLocked(t, other, "doc.txt")
	if got := z.gitCLI(t, "fsck", "--strict"); strings.Contains(got, "error") {
		t.Fatalf("fsck: %s", got)
	}
	if n := commitCount(t, r); n != 8 {
		t.Fatalf("%d commits", n)
	}
}

// TestPackPrunesUnreachableObjects: an object no commit reaches (a commit that failed after
// writing its blob) is pruned; a reachable one never is.
func TestPackPrunesUnreachableObjects(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	r := z.open(t)
	z.write(t, "kept.txt", "kept")
	commitLocked(t, r, "kept.txt")
	l, err := r.Lock()
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.writeBytes(3, []byte("nobody reaches this")) // 3: a blob
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Pack(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if r.hasObject(h) {
		t.Fatal("an unreachable object survived the pack")
	}
	if files := headFiles(t, r); files["kept.txt"] != "kept" {
		t.Fatalf("head: %v", files)
	}
}

// TestCheckingALaggingIndexWritesNothing: after a crash the index file lags behind HEAD
// (commits save it lazily); comparing it with HEAD must not store the trees it describes:
// nothing reaches them, and no commit charges them to the owner's quota (the kill test found
// the empty tree, 23 bytes, in the history and not in the usage).
func TestCheckingALaggingIndexWritesNothing(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	r := z.open(t)
	l, err := r.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil { // an empty index on disk
		t.Fatal(err)
	}
	l.Unlock()
	z.write(t, "a/b.txt", "content")
	commitLocked(t, r, "a/b.txt") // the index file is saved later: it lags (a kill here)
	before := objectsSize(t, z)
	other, err := Open(z.gitDir, z.work)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ol, err := other.Lock()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ol.Recover()
	ol.Unlock()
	if err != nil || !rep.IndexRebuilt {
		t.Fatalf("recover: %+v %v (the index must have lagged)", rep, err)
	}
	if err := other.Verify(); err != nil {
		t.Fatal(err)
	}
	if after := objectsSize(t, z); after != before {
		t.Fatalf("checking the index wrote %d bytes of objects", after-before)
	}
}
