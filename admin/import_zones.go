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
	dst := filepath.Join(im.staging, filepath.FromSlash(rel))
	for _, e := range entries {
		name, sub := e.Name(), path.Join(rel, e.Name())
		if !e.IsDir() {
			o.note("%s: not a folder (a symlink is never followed): not imported", sub)
			continue
		}
		switch name {
		case "Uploads":
			err = im.uploads(o, sub, filepath.Join(dst, name))
		case "Storage":
			err = im.space(o, name, sub, filepath.Join(dst, name), false)
		case "Documents":
			err = im.space(o, name, sub, filepath.Join(dst, name), true)
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
			data := filepath.Join(dst, "data")
			z := &zoneCopy{im: im, o: o, src: sub, dst: data, skipGit: versioned}
			if err := z.copy(); err != nil {
				return err
			}
			o.zones = append(o.zones, zoneReport{name: label, files: z.files, bytes: z.bytes})
			if versioned {
				if err := im.repo(o, label, sub, filepath.Join(dst, "repo.git"), data); err != nil {
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
func (im *importer) uploads(o *ownerReport, rel, dst string) error {
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
		z := &zoneCopy{im: im, o: o, src: sub, dst: filepath.Join(dst, conv)}
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
	im      *importer
	o       *ownerReport
	src     string // the zone's folder in the original, relative to its root
	dst     string // host path of the zone's folder in the staging storage
	skipGit bool   // the top-level .git is the zone's repository, imported apart
	files   int
	bytes   int64
}

// copy copies the whole zone.
func (z *zoneCopy) copy() error {
	if err := os.MkdirAll(z.dst, 0o700); err != nil {
		return err
	}
	return z.dir("")
}

// dir copies the folder rel of the zone (zone-relative, "" the root), entry by entry, by
// the type the folder lists (never a stat that follows a link).
func (z *zoneCopy) dir(rel string) error {
	entries, err := z.im.readDir(path.Join(z.src, rel))
	if err != nil {
		return err
	}
	for _, e := range entries {
		r := path.Join(rel, e.Name())
		if rel == "" && z.skipGit && e.Name() == ".git" {
			continue
		}
		dst := filepath.Join(z.dst, filepath.FromSlash(r))
		switch t := e.Type(); {
		case t.IsDir():
			if err := os.Mkdir(dst, 0o700); err != nil {
				return err
			}
			if err := z.dir(r); err != nil {
				return err
			}
		case t.IsRegular():
			if err := z.file(r, dst); err != nil {
				return fmt.Errorf("%s: %w", path.Join(z.src, r), err)
			}
		case t&fs.ModeSymlink != 0:
			if err := z.link(r, dst); err != nil {
				return err
			}
		default:
			z.o.note("%s: not a file, folder or symlink (%v): not imported", path.Join(z.src, r), t)
		}
	}
	return nil
}
