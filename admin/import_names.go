package admin

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The names rule (README "Coming from the original Fileshed"): the tools read, write and
// delete a file by the name the model sends, which they make NFC and in which they refuse
// control characters and invalid UTF-8 (core/confine.Clean). A name of the original that is
// not NFC (decomposed, as macOS zips make them), or carries a control character or an
// invalid byte, could be listed by shed_tree but never read, changed or deleted, and in a
// group a member could create its look-alike beside it. So the import renames it: NFC,
// each control character and each run of invalid bytes replaced by '_', one report line;
// the ownership record and a symlink's target follow the file. A rename onto a name its
// folder already holds is not made: that entry is left out, reported.

// reachableName is the name the tools can reach for name (the same when it already is).
func reachableName(name string) string {
	name = strings.ToValidUTF8(name, "_")
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '_'
		}
		return r
	}, name)
	return norm.NFC.String(name)
}

// reachablePath applies reachableName to each component of a slash path.
func reachablePath(p string) string {
	parts := strings.Split(p, "/")
	for i, c := range parts {
		parts[i] = reachableName(c)
	}
	return strings.Join(parts, "/")
}

// folderNames decides the name each entry of one folder of the original gets: its own, or
// its reachable one when that name is free in the folder. The second result lists the
// entries left out because their reachable name is taken (by an entry whose name needs no
// change, or by an earlier renamed one).
func folderNames(names []string) (to map[string]string, collided []string) {
	to = make(map[string]string, len(names))
	taken := map[string]bool{}
	for _, n := range names {
		if reachableName(n) == n {
			to[n], taken[n] = n, true
		}
	}
	for _, n := range names {
		if _, ok := to[n]; ok {
			continue
		}
		r := reachableName(n)
		if taken[r] {
			collided = append(collided, n)
			continue
		}
		to[n], taken[r] = r, true
	}
	return to, collided
}

// maxNamesShown bounds the names one report line lists.
const maxNamesShown = 10

// listNames joins names for a report line, at most maxNamesShown, then a count.
func listNames(names []string) string {
	shown := names[:min(len(names), maxNamesShown)]
	s := strings.Join(shown, ", ")
	if more := len(names) - len(shown); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// hardlink is a file of the original with more than one name: the copies made of it in
// this zone.
type hardlink struct {
	nlink  uint64
	copies []string // zone-relative paths in the original
	dsts   []string // host paths of the copies
	bytes  int64
}

// settleHardlinks decides, once the zone is copied, what becomes of the files the original
// had under several names. All of a file's names in this zone: each becomes a separate
// file (reported). A name elsewhere (another zone, another user, outside the original):
// its copies are removed and reported, since the content is shared with something the
// zone's owner may not own (a `ln` through the original's shed_exec reaches any file the
// server could).
func (z *zoneCopy) settleHardlinks() error {
	var separate []string
	keys := make([]uint64, 0, len(z.links))
	for ino := range z.links {
		keys = append(keys, ino)
	}
	slices.Sort(keys)
	for _, ino := range keys {
		h := z.links[ino]
		if uint64(len(h.copies)) >= h.nlink {
			separate = append(separate, strings.Join(h.copies, " = "))
			continue
		}
		for _, d := range h.dsts {
			if err := os.Remove(d); err != nil {
				return err
			}
		}
		z.files -= len(h.dsts)
		z.bytes -= h.bytes * int64(len(h.dsts))
		z.o.note("%s: %s: a hard link to a file outside this zone (%d names, %d here): not imported (its content may not be this owner's)",
			z.src, strings.Join(h.copies, ", "), h.nlink, len(h.copies))
	}
	if len(separate) > 0 {
		z.o.note("%s: hard links copied as separate files: %s", z.src, listNames(separate))
	}
	return nil
}

// protectedLink tells why the symlink at rel (zone-relative) with target may not be
// imported into a versioned zone: its target names a protected path ("" when it does not).
func (z *zoneCopy) protectedLink(rel, target string) string {
	for c := range strings.SplitSeq(path.Join(path.Dir(rel), target), "/") {
		if why := z.protected(c); why != "" {
			return why
		}
	}
	return ""
}
