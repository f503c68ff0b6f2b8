package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// objectsOnly are the valves that keep every before-image in the journal area (none inline),
// for the tests of the area itself.
var objectsOnly = map[string]string{"FILESHED_JOURNAL_INLINE_KB": "0"}

// The journal area is kept open per user (journal_area.go), its folders remembered: when an
// operator (or a restore) removes the area, or its objects, under a running server, the
// next change still keeps its before-image where the undo finds it — in the folder that is
// there now, not in the removed one the open root still points to.
func TestJournalAreaRemovedUnderTheServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, remove := range map[string]string{"the area": "", "its objects": "objects", "a fan of objects": "objects/??"} {
		t.Run(name, func(t *testing.T) {
			s, _ := testService(t, objectsOnly)
			c := Caller{UserID: "alice", ConvID: "conv1"}
			z := zoneOf(t, s, c, "storage")
			area := s.Layout().JournalArea("alice")
			txWrite(t, s, c, z, "a.txt", "one\n")
			txWrite(t, s, c, z, "a.txt", "two\n") // the area opened, the fan of "one\n" made
			gone := filepath.Join(area, remove)
			if matches, _ := filepath.Glob(gone); len(matches) == 1 {
				gone = matches[0] // that fan
			}
			txWrite(t, s, c, z, "a.txt", "one\n")
			must(t, os.RemoveAll(gone))
			txWrite(t, s, c, z, "a.txt", "three\n") // its image: "one\n" again, in the fan removed
			changes, _, err := s.Changes(ctx, c, ChangesQuery{Limit: 1})
			must(t, err)
			if len(changes) != 1 || !changes[0].Undoable {
				t.Fatalf("the write after the removal: %+v", changes)
			}
			_, err = s.Undo(ctx, c, changes[0].ID, "", false)
			must(t, err)
			if b, err := os.ReadFile(filepath.Join(z.fs.Dir(), "a.txt")); err != nil || string(b) != "one\n" {
				t.Fatalf("after the undo: %q, %v", b, err)
			}
		})
	}
}

// An object cut short (a server killed while it wrote the image, before any row named it)
// is not taken for the content it is named after: the next image of that content replaces
// it whole, and the undo puts back every byte.
func TestJournalImageCutShortIsReplaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := testService(t, objectsOnly)
	c := Caller{UserID: "alice", ConvID: "conv1"}
	z := zoneOf(t, s, c, "storage")
	content := strings.Repeat("every byte\n", 50)
	txWrite(t, s, c, z, "a.txt", content)
	sum := sha256.Sum256([]byte(content))
	name := hex.EncodeToString(sum[:])
	object := filepath.Join(s.Layout().JournalArea("alice"), "objects", name[:2], name)
	must(t, os.MkdirAll(filepath.Dir(object), 0o700))
	must(t, os.WriteFile(object, []byte(content[:100]), 0o600))
	txWrite(t, s, c, z, "a.txt", "replaced\n")
	changes, _, err := s.Changes(ctx, c, ChangesQuery{Limit: 1})
	must(t, err)
	_, err = s.Undo(ctx, c, changes[0].ID, "", false)
	must(t, err)
	if b, err := os.ReadFile(filepath.Join(z.fs.Dir(), "a.txt")); err != nil || string(b) != content {
		t.Fatalf("after the undo: %d bytes, %v; want %d", len(b), err, len(content))
	}
}
