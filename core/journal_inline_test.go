package core

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// rawState opens the SQLite state database of the storage base for reading rows as they are.
func rawState(t *testing.T, base string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(base, "fileshed.sqlite")+"?_pragma=busy_timeout(5000)")
	must(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// areaFiles are the files of alice's journal area (objects), by path below it.
func areaFiles(t *testing.T, s *Service) []string {
	t.Helper()
	area := s.Layout().JournalArea("alice")
	var out []string
	_ = filepath.WalkDir(area, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(area, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// A small file's before-image is held by its journal row (no file in the journal area), a
// larger one's is an object as before: the row of the small one holds the old bytes, its
// diff and its undo read them from there, and the undo of an empty file brings it back
// empty. A write through a link keeps the link's image (a manifest), not its target's bytes.
func TestJournalInlineImages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, base := testService(t, map[string]string{"FILESHED_JOURNAL_INLINE_KB": "16"})
	c := Caller{UserID: "alice", ConvID: "conv1"}
	z := zoneOf(t, s, c, "storage")
	small, big := "first line\nsecond line\n", strings.Repeat("b", 16<<10+1)
	txWrite(t, s, c, z, "small.txt", small)
	txWrite(t, s, c, z, "small.txt", "first line\nchanged\n")
	txWrite(t, s, c, z, "big.txt", big)
	txWrite(t, s, c, z, "big.txt", "short now\n")
	txWrite(t, s, c, z, "empty.txt", "")
	txWrite(t, s, c, z, "empty.txt", "not empty\n")
	edge := strings.Repeat("e", 16<<10) // journal.inline_kb exactly
	txWrite(t, s, c, z, "edge.txt", edge)
	txWrite(t, s, c, z, "edge.txt", "e\n")
	// A write through a link: the image is the link (a manifest), never its target's bytes.
	txWrite(t, s, c, z, "target.txt", "the target\n")
	must(t, os.Symlink("target.txt", filepath.Join(z.fs.Dir(), "ln.txt")))
	txWrite(t, s, c, z, "ln.txt", "through the link\n")
	if files := areaFiles(t, s); len(files) != 2 {
		t.Fatalf("the journal area holds %q, want the large file's object and the link's manifest", files)
	}
	rows := map[string]string{}
	var data []byte
	r, err := rawState(t, base).Query(`SELECT path, image, image_data FROM journal WHERE op = 'write'`)
	must(t, err)
	for r.Next() {
		var p, image string
		var d []byte
		must(t, r.Scan(&p, &image, &d))
		rows[p] = image
		if p == "small.txt" {
			data = d
		}
	}
	must(t, r.Err())
	r.Close()
	if !strings.HasPrefix(rows["small.txt"], imageInline) || !strings.HasPrefix(rows["empty.txt"], imageInline) ||
		!strings.HasPrefix(rows["edge.txt"], imageInline) || !strings.HasPrefix(rows["big.txt"], imageCAS) ||
		!strings.HasPrefix(rows["ln.txt"], imageTree) || string(data) != small {
		t.Fatalf("rows %v, small's image %q", rows, data)
	}
	changes, _, err := s.Changes(ctx, c, ChangesQuery{})
	must(t, err)
	byPath := map[string]ChangeInfo{}
	for _, ch := range changes {
		if ch.Op == "write" {
			byPath[ch.Path] = ch
		}
	}
	d, err := s.ChangeDiff(ctx, c, byPath["small.txt"].ID)
	must(t, err)
	if !strings.Contains(d.Diff, "-second line") || !strings.Contains(d.Diff, "+changed") {
		t.Fatalf("the diff from an inline image: %+v", d)
	}
	_, err = s.Undo(ctx, c, byPath["ln.txt"].ID, "", true)
	must(t, err)
	if target, err := os.Readlink(filepath.Join(z.fs.Dir(), "ln.txt")); err != nil || target != "target.txt" {
		t.Fatalf("the link after the undo: %q, %v", target, err)
	}
	for p, want := range map[string]string{"small.txt": small, "big.txt": big, "empty.txt": "", "edge.txt": edge} {
		_, err := s.Undo(ctx, c, byPath[p].ID, "", false)
		must(t, err)
		if b, err := os.ReadFile(filepath.Join(z.fs.Dir(), p)); err != nil || string(b) != want {
			t.Fatalf("%s after the undo: %d bytes, %v; want %d", p, len(b), err, len(want))
		}
	}
}

// Inline images count toward journal.max_percent like objects: past it the oldest are
// dropped (their bytes cleared from the row, the change undoable false, "evicted"), what
// stays holds at most the bound, the newest is still undone; once older than keep_days the
// rows go with their images.
func TestJournalInlineImagesEvicted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, base := testService(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1", "FILESHED_JOURNAL_MAX_PERCENT": "20",
		"FILESHED_JOURNAL_INLINE_KB": "64"})
	c := Caller{UserID: "alice", ConvID: "conv1"}
	z := zoneOf(t, s, c, "storage")
	version := func(i int) string { return string(rune('a'+i)) + strings.Repeat("x", 30<<10) }
	for i := range 10 { // nine images of 30 KB: 270 KB, over 20 % of 1 MB
		txWrite(t, s, c, z, "f.txt", version(i))
	}
	db := rawState(t, base)
	var held, kept int64
	must(t, db.QueryRow(`SELECT COALESCE(SUM(length(image_data)), 0), count(image_data) FROM journal`).Scan(&held, &kept))
	if limit := s.journalLimit(store.Owner{Kind: "user", ID: "alice"}); held > limit || kept == 0 || kept == 9 {
		t.Fatalf("%d inline images hold %d bytes; the bound is %d", kept, held, limit)
	}
	if files := areaFiles(t, s); len(files) != 0 {
		t.Fatalf("the journal area holds %q", files)
	}
	changes, _, err := s.Changes(ctx, c, ChangesQuery{})
	must(t, err)
	newest, oldest := changes[0], changes[len(changes)-2] // the last one is the creation
	if !newest.Undoable || oldest.Undoable || !strings.Contains(oldest.Why, "evicted") || s.JournalEvictions() == 0 {
		t.Fatalf("after the eviction: newest %+v, oldest overwrite %+v, %d evictions", newest, oldest, s.JournalEvictions())
	}
	var cleared int
	must(t, db.QueryRow(`SELECT count(*) FROM journal WHERE image = '' AND no_image LIKE 'evicted%' AND image_data IS NULL`).Scan(&cleared))
	if int64(cleared) != 9-kept {
		t.Fatalf("%d rows evicted with their bytes cleared, want %d", cleared, 9-kept)
	}
	if _, err := s.Undo(ctx, c, oldest.ID, "", false); err == nil {
		t.Fatal("an evicted change was undone")
	}
	_, err = s.Undo(ctx, c, newest.ID, "", false)
	must(t, err)
	if b, _ := os.ReadFile(filepath.Join(z.fs.Dir(), "f.txt")); string(b) != version(8) {
		t.Fatalf("after the undo: %.10q", b)
	}
	// keep_days: every row older than it goes, its image with it.
	_, _, err = s.Changes(ctx, c, ChangesQuery{}) // the undo's settlement written
	must(t, err)
	_, err = db.Exec(`UPDATE journal SET at_us = at_us - $1`, (8 * 24 * time.Hour).Microseconds())
	must(t, err)
	must(t, s.PruneJournal(ctx, store.Owner{Kind: "user", ID: "alice"}))
	var left int
	must(t, db.QueryRow(`SELECT count(*) FROM journal`).Scan(&left))
	if left != 0 {
		t.Fatalf("%d rows left past keep_days", left)
	}
}

// An inline image is in the state database the replicas share: a small file overwritten on
// one replica is undone on the other from the row alone (a large one from the journal area
// of the shared storage, as before). PostgreSQL.
func TestJournalInlineImagesAcrossReplicas(t *testing.T) {
	t.Parallel()
	a, b, _, _ := replicaPair(t)
	ctx := context.Background()
	c := Caller{UserID: "alice", ConvID: "conv1"}
	za := zoneOf(t, a, c, "storage")
	small, big := "small one\n", strings.Repeat("big one\n", 9<<10) // big: over journal.inline_kb (64)
	txWrite(t, a, c, za, "small.txt", small)
	txWrite(t, a, c, za, "small.txt", "small two\n")
	txWrite(t, a, c, za, "big.txt", big)
	txWrite(t, a, c, za, "big.txt", "big two\n")
	changes, _, err := b.Changes(ctx, c, ChangesQuery{})
	must(t, err)
	undone := 0
	for _, ch := range changes {
		if ch.Op != "write" {
			continue
		}
		e, ok, err := b.db.JournalByID(ctx, ch.ID)
		must(t, err)
		want := map[string]string{"small.txt": imageInline, "big.txt": imageCAS}[ch.Path]
		if !ok || !strings.HasPrefix(e.Image, want) {
			t.Fatalf("%s's image on the other replica: %q, want %s...", ch.Path, e.Image, want)
		}
		_, err = b.Undo(ctx, c, ch.ID, "", false)
		must(t, err)
		undone++
	}
	for p, want := range map[string]string{"small.txt": small, "big.txt": big} {
		if got, _ := os.ReadFile(filepath.Join(za.fs.Dir(), p)); string(got) != want || undone != 2 {
			t.Fatalf("%s after %d undos on the other replica: %d bytes, want %d", p, undone, len(got), len(want))
		}
	}
}
