package archives

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/archive"
	"github.com/fileshed/fileshed/core/confine"
)

// UnzipInput is the input of shed_unzip.
type UnzipInput struct {
	core.ZoneArgs
	Src       string `json:"src" required:"true" doc:"ZIP file, relative to src_zone"`
	Dest      string `json:"dest,omitempty" doc:"Destination folder (default: the ZIP's folder)"`
	SrcZone   string `json:"src_zone,omitempty" enum:"uploads,storage,documents,group" doc:"Default: zone"`
	Overwrite bool   `json:"overwrite,omitempty" doc:"Replace existing files (never folders)"`
}

// listCap bounds the names an answer lists (the original's 50).
const listCap = 50

// Unzip extracts a ZIP archive (reference §5.19) from one of the caller's zones into
// storage, documents or a group. Nothing is trusted: archive.Open refuses unsafe names and
// bombs from the central directory, Extract checks the real bytes, and the whole archive
// is written into a staging folder inside the zone that is moved into place only when
// complete, so a failure leaves the zone and the quota as they were. One commit in
// versioned zones.
func (s *Tools) Unzip(ctx context.Context, c core.Caller, in UnzipInput) (core.Result, error) {
	z, err := s.archiveZone(ctx, c, in.ZoneArgs, "unzip destination")
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	if in.Src == "" {
		return core.Result{}, core.Errf(core.MissingParameter, "Source path is required").With("parameter", "src").
			WithHint("Specify the ZIP file to extract: shed_archive(action='unzip', zone, src, dest)")
	}
	srcZone := in.SrcZone
	if srcZone == "" {
		srcZone = in.Zone
	}
	if _, ok := core.ZoneNames[strings.ToLower(strings.TrimSpace(srcZone))]; !ok {
		return core.Result{}, core.Errf(core.ZoneForbidden, "Source zone '%s' not allowed", srcZone).With("src_zone", srcZone).
			With("valid", core.ZoneList()).WithHint("src_zone is one of your zones: uploads, storage, documents or group (with group)")
	}
	o, err := s.OpenRead(ctx, c, core.ZoneArgs{Zone: srcZone, Group: in.Group, AllowZoneInPath: in.AllowZoneInPath}, in.Src, notAFileDir)
	if err != nil {
		return core.Result{}, err
	}
	defer o.Close()
	a, err := archive.Open(o.F, o.Info.Size(), s.archiveLimits(), unzipExclude(z))
	if err != nil {
		return core.Result{}, archiveError(err, o.Z, o.Rel, z)
	}
	destRel := path.Dir(o.Rel) // the ZIP's folder, re-created in the destination zone
	if in.Dest != "" {
		if destRel, err = z.Path(in.Dest, in.AllowZoneInPath); err != nil {
			return core.Result{}, err
		}
	} else if destRel == "." {
		destRel = ""
	}
	shownDest := destRel
	if shownDest == "" {
		shownDest = "."
	}
	replacing, err := checkUnzipDest(z, a, destRel, in.Overwrite)
	if err != nil {
		return core.Result{}, archiveError(err, o.Z, o.Rel, z)
	}
	message := fmt.Sprintf("Extracted %s to %s", o.Rel, shownDest)
	if o.Z.Label != z.Label {
		message = fmt.Sprintf("Extracted %s:%s to %s", o.Z.Name, o.Rel, shownDest)
	}
	tx, err := s.Begin(ctx, c, core.Edit{Tool: "Unzip", Message: message, Steps: unzipSteps(z, a, destRel, shownDest, replacing),
		Quota: unzipQuota(a)})
	if err != nil {
		return core.Result{}, err
	}
	defer tx.Close()
	u, hash, err := s.extract(ctx, c, tx, z, a, destRel, in.Overwrite)
	if err != nil {
		return core.Result{}, archiveError(err, o.Z, o.Rel, z)
	}
	return core.Result{Data: u.data(a, o, z, shownDest, hash), Message: u.message(a, o.Z, z)}, nil
}

// unzipSteps are the steps of an extraction's transaction: the folder gains the archive's
// entries; the files overwrite replaces (as they were when checked) are written, and so is
// the database of a new SQLite companion (sqlite_companions.go).
func unzipSteps(z *core.Zone, a *archive.Archive, destRel, shownDest string, replacing []string) []core.Step {
	steps := []core.Step{{Zone: z, Path: destRel, Shown: shownDest, Op: core.OpAdd}}
	written := map[string]bool{}
	for _, p := range replacing {
		steps, written[p] = append(steps, core.Step{Zone: z, Path: p, Op: core.OpWrite}), true
	}
	for _, e := range a.Entries {
		if p := path.Join(destRel, e.Path); e.Path != "" && e.Skip == "" && !e.Dir && !written[p] {
			if _, ok := core.CompanionOf(p); ok {
				steps, written[p] = append(steps, core.Step{Zone: z, Path: p, Op: core.OpWrite}), true
			}
		}
	}
	return steps
}

// unzipQuota is what an extraction of a needs of the quota: its declared bytes and its
// names, and the staging folder's while it exists.
func unzipQuota(a *archive.Archive) *core.Quota {
	return &core.Quota{Size: -1, Growth: core.Amount{Bytes: a.Declared, Files: int64(a.Names) + 1}}
}

// extract runs the extraction in its transaction tx (unzipSteps, which reserved the
// archive's size and names): unzipInto in Apply. It returns what it did and the commit id.
func (s *Tools) extract(ctx context.Context, c core.Caller, tx *core.Tx, z *core.Zone, a *archive.Archive, destRel string, overwrite bool) (*unzipped, string, error) {
	u := &unzipped{}
	hash, err := tx.Apply(func() (core.Change, error) {
		ch, err := s.unzipInto(ctx, c, z, tx, a, destRel, overwrite, u)
		ch.Growth = u.delta()
		return ch, err
	})
	return u, hash, err
}

// unzipped is what an extraction did.
type unzipped struct {
	stats    archive.Stats
	moved    bool  // the staging folder's content reached the destination
	replaced int64 // bytes of the existing files replaced (overwrite)
	nReplace int
	names    int64 // names the move added: staged, less folders merged and files replaced
}

// delta is the change of the zone's usage: nothing unless the content was moved in.
func (u *unzipped) delta() core.Amount {
	if !u.moved {
		return core.Amount{}
	}
	return core.Amount{Bytes: u.stats.Bytes - u.replaced, Files: u.names}
}

// unzipInto extracts a into a staging folder and moves it into destRel; it runs in the
// transaction's Apply (in versioned zones no other whole-tree change runs meanwhile).
func (s *Tools) unzipInto(ctx context.Context, c core.Caller, z *core.Zone, tx *core.Tx, a *archive.Archive, destRel string, overwrite bool, u *unzipped) (core.Change, error) {
	staging, release := confine.HoldTemp()
	defer release() // after the RemoveAll below: the name is held until it is gone
	w := tx.Fs(z)
	if err := w.Mkdir(staging, 0o700); err != nil {
		return core.Change{}, err
	}
	defer w.RemoveAll(staging) // empty after a successful move
	dest := newStagingDest(w, staging)
	var err error
	u.stats, err = a.Extract(ctx, dest)
	if werr := dest.wait(); err == nil {
		err = werr
	}
	if err != nil {
		return core.Change{}, err
	}
	if err := w.MakeDir(destRel); err != nil {
		return core.Change{}, err
	}
	// Each file overwrite replaces is checked (a locked edit another conversation opened
	// during the extraction) before anything moves, so a refusal leaves the zone as it was,
	// and again at its own rename.
	m := mover{z: z, w: w, overwrite: overwrite, check: func(p string) error { return tx.CheckReplace(z, p) }}
	err = m.dryRun(staging, destRel)
	if err == nil {
		err = m.move(staging, destRel)
	}
	if err != nil {
		m.undo()
		return core.Change{}, err
	}
	u.moved, u.replaced, u.nReplace = true, m.replaced, len(m.replacedPaths)
	u.names = dest.names - m.merged - int64(len(m.replacedPaths))
	m.sync()
	var created []string
	for i := range a.Entries {
		if e := &a.Entries[i]; e.Path != "" && e.Skip == "" && !e.Dir {
			created = append(created, path.Join(destRel, e.Path))
		}
	}
	return core.Change{Paths: m.paths, Created: created}, nil
}

// checkUnzipDest refuses a destination that is not a real folder of the zone (a symlink
// on the way, a file) and entries that would land on something existing: a file without
// overwrite (FILE_EXISTS), or anything that is not a plain file or folder of the same kind.
// It returns the existing files that overwrite would replace.
func checkUnzipDest(z *core.Zone, a *archive.Archive, destRel string, overwrite bool) ([]string, error) {
	checked := map[string]bool{}
	// dir checks that p, if it exists, is a real folder (not a symlink, not a file).
	dir := func(p, shown string) error {
		if p == "" || checked[p] {
			return nil
		}
		checked[p] = true
		fi, _, err := z.Fs().LstatIfPossible(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case errors.Is(err, syscall.ENOTDIR):
			return core.ParentNotDir(z, shown)
		case err != nil:
			return core.WriteError(err, z, shown)
		case fi.Mode()&fs.ModeSymlink != 0:
			return core.Errf(core.PathEscape, "Destination %s is a symlink", shown).With("path", shown).With("zone", z.Label).
				WithHint("Extract into a real folder: give another dest")
		case !fi.IsDir():
			return core.Errf(core.FileExists, "Destination %s is a file, the archive needs a folder there", shown).With("path", shown).
				With("zone", z.Label).WithHint("Give another dest, or rename or delete the file first")
		}
		return nil
	}
	for p := destRel; p != "."; p = path.Dir(p) {
		if err := dir(p, p); err != nil {
			return nil, err
		}
	}
	var exists, replacing []string
	for i := range a.Entries {
		e := &a.Entries[i]
		if e.Path == "" || e.Skip != "" {
			continue
		}
		parts := strings.Split(e.Path, "/")
		for j := 1; j < len(parts); j++ {
			p := strings.Join(parts[:j], "/")
			if err := dir(path.Join(destRel, p), p); err != nil {
				return nil, err
			}
		}
		target := path.Join(destRel, e.Path)
		if e.Dir {
			if err := dir(target, e.Path); err != nil {
				return nil, err
			}
			continue
		}
		fi, _, err := z.Fs().LstatIfPossible(target)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, core.WriteError(err, z, e.Path)
		case !fi.Mode().IsRegular():
			return nil, core.Errf(core.FileExists, "Destination %s exists and is not a regular file", e.Path).With("path", e.Path).
				With("zone", z.Label).WithHint("overwrite replaces files only: delete or rename it first, or give another dest")
		case overwrite:
			replacing = append(replacing, target)
		default:
			exists = append(exists, e.Path)
		}
	}
	if len(exists) > 0 {
		return nil, core.Errf(core.FileExists, "%d file(s) of the archive already exist, e.g. %s", len(exists), exists[0]).
			With("existing", exists[:min(len(exists), listCap)]).With("dest", destRel).
			WithHint("Add overwrite=true to replace them, or give another dest (e.g. a new folder)")
	}
	return replacing, nil
}

// data is the answer of a successful extraction: the original's fields, plus what was
// skipped and replaced.
func (u *unzipped) data(a *archive.Archive, o *core.Opened, z *core.Zone, dest, hash string) unzipResult {
	var files []string
	skipped := []skippedEntry{}
	nSkipped := 0
	for i := range a.Entries {
		e := &a.Entries[i]
		switch {
		case e.Skip != "":
			nSkipped++
			if len(skipped) < listCap {
				skipped = append(skipped, skippedEntry{Entry: e.Name, Reason: e.Skip})
			}
		case len(files) < listCap:
			files = append(files, e.Path)
		}
	}
	count := u.stats.Files + u.stats.Dirs
	return unzipResult{Bytes: u.stats.Bytes, Commit: hash, Destination: dest, DestinationZone: z.Name, Files: files,
		FilesCount: count, ReplacedCount: u.nReplace, Skipped: skipped, SkippedCount: nSkipped, Source: o.Rel,
		SourceZone: o.Z.Name, Truncated: count > len(files)}
}

// unzipResult is the answer of shed_unzip (fields in the order of the JSON keys,
// alphabetical, as the map it replaces wrote them): files is null when no entry was
// extracted, skipped always a list; commit only in versioned zones.
type unzipResult struct {
	Bytes           int64          `json:"bytes"`
	Commit          string         `json:"commit,omitempty"`
	Destination     string         `json:"destination"`
	DestinationZone string         `json:"destination_zone"`
	Files           []string       `json:"files"`
	FilesCount      int            `json:"files_count"`
	ReplacedCount   int            `json:"replaced_count"`
	Skipped         []skippedEntry `json:"skipped"`
	SkippedCount    int            `json:"skipped_count"`
	Source          string         `json:"source"`
	SourceZone      string         `json:"source_zone"`
	Truncated       bool           `json:"truncated"`
}

// skippedEntry is an archive entry shed_unzip did not extract, and why.
type skippedEntry struct {
	Entry  string `json:"entry"`
	Reason string `json:"reason"`
}

// message is the one-line summary of a successful extraction.
func (u *unzipped) message(a *archive.Archive, src, dst *core.Zone) string {
	msg := fmt.Sprintf("Extracted %d files from %s to %s", u.stats.Files+u.stats.Dirs, src.Name, dst.Name)
	skipped := 0
	for i := range a.Entries {
		if a.Entries[i].Skip != "" {
			skipped++
		}
	}
	if skipped > 0 {
		msg += fmt.Sprintf("; %d entries skipped (see data.skipped)", skipped)
	}
	return msg
}
