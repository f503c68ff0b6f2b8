package core

import (
	"path"
	"slices"
	"strings"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/vcs"
)

// Protected paths (issue 23): names no tool and no command may create or change, decided
// here once for every writer (the write transaction, rename sources and destinations,
// copies, archive entries, what a command leaves behind).
//
//   - In a versioned zone (Documents, group), a path with a .git component: ".git" in any
//     letter case, its NTFS aliases (".git.", ".git ", "git~1", the alternate data streams
//     ".git::$INDEX_ALLOCATION", "git~1:x") and its HFS+ spellings with zero-width
//     characters (".g\u200cit"), which git itself refuses on checkout (CVE-2014-9390,
//     CVE-2019-1353): one rule, vcs.Ignored, also what a commit leaves out. The zone's history lives outside the zone; a .git folder inside it
//     would never be committed, and one planted in a group — a .git/config with
//     core.fsmonitor, a hook — runs code on every member who downloads the folder and opens
//     it with git. Storage and Uploads keep a user's own clones as they are.
//   - In every zone, fileshed's own temporary names (".fileshed-tmp-", a replica id, "-" and
//     26 base32 letters, or the older form without the id: confine.IsTempName): the sweeps
//     delete them as crash leftovers.
//
// The editzone, the repository and the locks are outside every zone's data folder: no path
// a tool confines can reach them.

// ProtectedReason says why rel (zone-relative, clean) may not be written in z: "" when it may.
func ProtectedReason(z *Zone, rel string) string {
	for c := range strings.SplitSeq(rel, "/") {
		if confine.IsTempName(c) {
			return "the name is reserved for fileshed's temporary files"
		}
	}
	if z.Versioned && rel != "" && vcs.Ignored(rel) {
		return ".git folders are never written in a versioned zone: its history is kept by fileshed (shed_version)"
	}
	return ""
}

// KeptClone reports whether rel (zone-relative, clean) is the ".git" at the top of a zone or
// inside it: no tool removes it, in any zone (the original's rule for shed_delete, reference
// §5.7: a user's clone in Storage is as precious as a repository, and prompts expect it kept).
// Writes inside it are ProtectedReason's business.
func KeptClone(rel string) bool { return rel == ".git" || strings.HasPrefix(rel, ".git/") }

// CheckProtected is PROTECTED_PATH for rel in z (shown as the model wrote it), nil when rel
// may be written.
func CheckProtected(z *Zone, rel, shown string) error {
	why := ProtectedReason(z, rel)
	if why == "" {
		return nil
	}
	return Errf(ProtectedPath, "Protected path: %s (%s)", Shorten(shown), why).With("path", Shorten(shown)).With("zone", z.Label).
		WithHint("Choose another name; .git folders and fileshed's .fileshed-tmp- names cannot be created, changed or moved here")
}

// CheckProtectedTarget is CheckProtected for rel and for the place a change of rel reaches
// in fsys (z's file system, or the folder a command runs in): every symlink on the way
// resolved through the confinement layer, the final one too when follow (a write goes to a
// link's target; a delete or a rename acts on the link itself). Why: a link a command left
// (proj/lnk -> .git) is no protected name, but a write through it creates one (issue 32).
func CheckProtectedTarget(z *Zone, fsys ReadFs, rel, shown string, follow bool) error {
	if err := CheckProtected(z, rel, shown); err != nil {
		return err
	}
	to, ok := reached(fsys.f, rel, follow)
	if !ok || to == rel {
		return nil
	}
	why := ProtectedReason(z, to)
	if why == "" {
		return nil
	}
	return Errf(ProtectedPath, "Protected path: %s leads to %s through a symbolic link (%s)", Shorten(shown), Shorten(to), why).
		With("path", Shorten(shown)).With("target", Shorten(to)).With("zone", z.Label).
		WithHint("A symbolic link on the way points to a protected name: delete the link with shed_delete (the link goes, never its target), then write a plain file")
}

// reached is the zone-relative path a change of rel lands on in fsys (see
// CheckProtectedTarget); false when that cannot be told (the path leaves the zone, a link
// loop), which the change itself then refuses.
func reached(fsys *confine.Fs, rel string, follow bool) (string, bool) {
	if follow {
		to, err := fsys.Resolve(rel)
		return to, err == nil
	}
	dir := path.Dir(rel)
	if dir == "." {
		return rel, true
	}
	to, err := fsys.Resolve(dir)
	return path.Join(to, path.Base(rel)), err == nil
}

// SweepProtected removes what a command made at a protected path of the versioned zone z —
// the topmost protected name of each new entry of after (an entry of before, which
// pre-dates the rule or the command, is left alone), and each new or retargeted symlink
// (same name, new target) that leads to a protected path (proj/lnk -> .git: a later write
// through it would create one) — and returns one data.reverted entry per name it removed.
// Only versioned zones: there the command measures with the zone's gate held exclusively,
// so no other write's temporary file is in flight (in Storage one would be, and
// fileshed's temporary names are swept at start anyway).
func SweepProtected(z *Zone, before, after Snapshot) []RevertedFile {
	if !z.Versioned {
		return nil
	}
	var tops []string
	for rel, e := range after.Entries {
		old, existed := before.Entries[rel]
		if existed && old.Link == e.Link {
			continue
		}
		if top := protectedTop(z, rel); top != "" {
			if !isOld(before, top) {
				tops = append(tops, top)
			}
			continue
		}
		if e.Link != "" && linksToProtected(z, rel) {
			tops = append(tops, rel)
		}
	}
	slices.Sort(tops)
	tops = slices.Compact(tops)
	var removed []RevertedFile
	for _, top := range tops {
		if err := z.fs.RemoveAll(top); err == nil {
			removed = append(removed, RevertedFile{Path: top, Reason: revertedProtected, Removed: true})
		}
	}
	return removed
}

// protectedTop is the topmost protected prefix of rel in z ("" when none). The rule is per
// name, so each name is looked at once (a tree thousands of folders deep would make a
// check of every prefix quadratic in its depth).
func protectedTop(z *Zone, rel string) string {
	end := 0
	for c := range strings.SplitSeq(rel, "/") {
		end += len(c)
		if ProtectedReason(z, c) != "" {
			return rel[:end]
		}
		end++ // the slash
	}
	return ""
}

// linksToProtected tells whether the symlink rel of z leads to a protected path, its
// target resolved relative to the link's folder, in the zone, every link on the way
// followed.
func linksToProtected(z *Zone, rel string) bool {
	to, ok := reached(z.fs, rel, true)
	return ok && ProtectedReason(z, to) != ""
}

// isOld tells whether the snapshot before holds rel.
func isOld(before Snapshot, rel string) bool {
	_, ok := before.Entries[rel]
	return ok
}

// revertedProtected is the reason of a data.reverted entry removed for a protected path.
const revertedProtected = "protected path: .git folders and fileshed's temporary names are not kept here"

// RevertedLocked is the reason of a data.reverted entry put back for a locked edit.
const RevertedLocked = "locked by another conversation"

// RevertedFile is one entry of a command's data.reverted: a file a guard put back or
// removed after the command (the lock guard, the protected-path sweep, and the ownership
// guard in group zones). Fields in the order of the JSON keys (alphabetical, as the maps it
// replaces wrote them): owner and mode only from the ownership guard (a record's owner and
// mode are never empty), removed (true) only from the sweep.
type RevertedFile struct {
	Mode    string `json:"mode,omitempty"`
	Owner   string `json:"owner,omitempty"`
	Path    string `json:"path"`
	Reason  string `json:"reason"`
	Removed bool   `json:"removed,omitempty"`
}
