package admin

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fileshed/fileshed/core"
)

// user imports users/{id} of the original (rel) into the staging storage.
func (im *importer) user(o *ownerReport, rel string) error {
	entries, err := im.readDir(rel)
	if err != nil {
		return err
	}
	l := core.LayoutOf(im.staging)
	for _, e := range entries {
		name, sub := e.Name(), path.Join(rel, e.Name())
		if !e.IsDir() {
			o.note("%s: not a folder (a symlink is never followed): not imported", sub)
			continue
		}
		switch name {
		case "Uploads":
			err = im.uploads(o, sub)
		case "Storage":
			err = im.space(o, name, sub, l.StorageSpace(o.id), false)
		case "Documents":
			err = im.space(o, name, sub, l.DocumentsSpace(o.id), true)
		default:
			o.note("%s: not a zone of the original: not imported", sub)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// space imports a zone with its working folders (reference §2.1): data/ is copied (and,
// versioned, its .git becomes the repository beside it), locks/ and editzone/ are dropped
// and reported: a locked edit in progress cannot be carried over (fileshed keeps its locks
// in the state database, its working copies elsewhere), its file is imported as last saved.
func (im *importer) space(o *ownerReport, label, rel, dst string, versioned bool) error {
	entries, err := im.readDir(rel)
	if err != nil {
		return err
	}
	for _, e := range entries {
		sub := path.Join(rel, e.Name())
		if !e.IsDir() {
			o.note("%s: not a folder (a symlink is never followed): not imported", sub)
			continue
		}
		switch e.Name() {
		case "data":
			data := core.DataDir(dst)
			z := &zoneCopy{im: im, o: o, src: sub, dst: data, versioned: versioned}
			if err := z.copy(); err != nil {
				return err
			}
			o.zones = append(o.zones, zoneReport{name: label, files: z.files, bytes: z.bytes})
			if versioned {
				if err := im.repo(o, label, sub, core.RepoDir(dst), data); err != nil {
					return err
				}
			}
		case "locks", "editzone":
			if err := im.dropped(o, sub, e.Name()); err != nil {
				return err
			}
		default:
			o.note("%s: not part of the original's layout: not imported", sub)
		}
	}
	return nil
}

// uploads imports Uploads/{chat}/...: one zone per conversation, under the name fileshed
// gives that chat id (core.SanitizeConvID), so the conversation finds its files again.
func (im *importer) uploads(o *ownerReport, rel string) error {
	entries, err := im.readDir(rel)
	if err != nil {
		return err
	}
	total := zoneReport{name: "Uploads"}
	seen := map[string]string{}
	for _, e := range entries {
		sub := path.Join(rel, e.Name())
		if !e.IsDir() {
			o.note("%s: not in a conversation folder (or a symlink, never followed): not imported", sub)
			continue
		}
		conv := core.SanitizeConvID(e.Name())
		if other, dup := seen[conv]; dup {
			o.note("%s: its conversation folder would be %s, as %s's: not imported", sub, conv, other)
			continue
		}
		seen[conv] = sub
		if conv != e.Name() {
			o.note("%s: conversation folder renamed %s (the name fileshed gives that chat id)", sub, conv)
		}
		z := &zoneCopy{im: im, o: o, src: sub, dst: core.LayoutOf(im.staging).UploadsOf(o.id, conv)}
		if err := z.copy(); err != nil {
			return err
		}
		total.files += z.files
		total.bytes += z.bytes
	}
	o.zones = append(o.zones, total)
	return nil
}

// dropped reports what a locks/ or editzone/ folder held: the locked files by name, the
// working copies by count.
func (im *importer) dropped(o *ownerReport, rel, kind string) error {
	var names []string
	files := 0
	err := fs.WalkDir(im.src.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files++
			if kind == "locks" && strings.HasSuffix(p, ".lock") {
				names = append(names, strings.TrimSuffix(strings.TrimPrefix(p, rel+"/"), ".lock"))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case files == 0:
	case kind == "locks":
		o.note("%s: %d lock(s) dropped (%s): those locked edits end, their files are imported as last saved", rel, files, strings.Join(names, ", "))
	default:
		o.note("%s: %d working cop(ies) of locked edits dropped (unsaved edits; they stay in the original)", rel, files)
	}
	return nil
}

// zoneCopy copies one zone's folder of the original into the staging storage.
type zoneCopy struct {
	im        *importer
	o         *ownerReport
	src       string // the zone's folder in the original, relative to its root
	dst       string // host path of the zone's folder in the staging storage
	versioned bool   // Documents or group: the top-level .git is the repository, imported apart
	files     int
	bytes     int64
	links     map[uint64]*hardlink // files with several names, by inode
	renamed   []string             // "old -> new", zone-relative
}

// copy copies the whole zone, then settles its hard links and reports its renames.
func (z *zoneCopy) copy() error {
	if err := os.MkdirAll(z.dst, 0o700); err != nil {
		return err
	}
	z.links = map[uint64]*hardlink{}
	if err := z.dir("", ""); err != nil {
		return err
	}
	if len(z.renamed) > 0 {
		z.o.note("%s: %d name(s) renamed to what the tools can reach (NFC, control characters and invalid bytes replaced by '_'): %s",
			z.src, len(z.renamed), listNames(z.renamed))
	}
	return z.settleHardlinks()
}

// protected is why name may not be imported into this zone (core.ProtectedReason: a .git
// in any spelling in a versioned zone, fileshed's temporary names anywhere), "" when it may.
func (z *zoneCopy) protected(name string) string {
	return core.ProtectedReason(&core.Zone{Versioned: z.versioned}, name)
}

// dir copies the folder srcRel of the zone (zone-relative, "" the root) to dstRel (its
// name in fileshed: the names rule, import_names.go), entry by entry, by the type the
// folder lists (never a stat that follows a link).
func (z *zoneCopy) dir(srcRel, dstRel string) error {
	entries, err := z.im.readDir(path.Join(z.src, srcRel))
	if err != nil {
		return err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	to, collided := folderNames(names)
	for _, n := range collided {
		z.o.collided = append(z.o.collided, path.Join(srcRel, n))
		z.o.note("%s (%+q): its name as the tools can reach it, %+q, is taken in its folder: not imported", path.Join(z.src, srcRel, n), n, reachableName(n))
	}
	for _, e := range entries {
		name, ok := to[e.Name()]
		if !ok || srcRel == "" && z.versioned && e.Name() == ".git" {
			continue
		}
		sr, dr := path.Join(srcRel, e.Name()), path.Join(dstRel, name)
		if why := z.protected(name); why != "" {
			z.o.note("%s: a protected name (%s): not imported", path.Join(z.src, sr), why)
			continue
		}
		if name != e.Name() {
			z.renamed = append(z.renamed, fmt.Sprintf("%+q -> %+q", sr, dr)) // ASCII: NFD and NFC differ visibly
		}
		dst := filepath.Join(z.dst, filepath.FromSlash(dr))
		switch t := e.Type(); {
		case t.IsDir():
			if err := os.Mkdir(dst, 0o700); err != nil {
				return err
			}
			if err := z.dir(sr, dr); err != nil {
				return err
			}
		case t.IsRegular():
			if err := z.file(sr, dst); err != nil {
				return fmt.Errorf("%s: %w", path.Join(z.src, sr), err)
			}
		case t&fs.ModeSymlink != 0:
			if err := z.link(sr, dr, dst); err != nil {
				return err
			}
		default:
			z.o.note("%s: not a file, folder or symlink (%v): not imported", path.Join(z.src, sr), t)
		}
	}
	return nil
}
