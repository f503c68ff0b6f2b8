package archives

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/fileshed/fileshed/core"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/archive"
	"github.com/fileshed/fileshed/core/confine"
)

// ZipInput is the input of shed_zip.
type ZipInput struct {
	core.ZoneArgs
	Src              string `json:"src" required:"true"`
	Dest             string `json:"dest,omitempty" doc:"ZIP path (default: src + '.zip')"`
	IncludeEmptyDirs bool   `json:"include_empty_dirs,omitempty"`
}

// Zip compresses a file or a folder of storage, documents or a group into a new ZIP file
// of the same zone (reference §5.20). The archive is streamed through the one atomic write
// path (quota reserved for its largest possible size, settled to the real one; a commit in
// versioned zones). Symlinks are never followed nor stored, special files are skipped (both
// listed in data.skipped), and the archive being written is never part of itself. It takes
// one of the caller's command slots; the tree is walked twice (to bound the archive, then
// to write it), holding no list of its files.
func (s *Tools) Zip(ctx context.Context, c core.Caller, in ZipInput) (core.Result, error) {
	z, err := s.archiveZone(ctx, c, in.ZoneArgs, "zip")
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	if in.Src == "" {
		return core.Result{}, core.Errf(core.MissingParameter, "Source path is required").With("parameter", "src").
			WithHint("Specify the file or folder to compress: shed_archive(action='zip', zone, src, dest)")
	}
	rel, err := z.Path(in.Src, in.AllowZoneInPath)
	if err != nil {
		return core.Result{}, err
	}
	fi, _, err := z.Fs().LstatIfPossible(rel)
	switch {
	case err != nil:
		return core.Result{}, core.PathNotFound(err, z, in.Src)
	case fi.Mode()&fs.ModeSymlink != 0:
		return core.Result{}, core.Errf(core.InvalidPath, "Source is a symlink: %s", in.Src).With("path", in.Src).With("zone", z.Label).
			WithHint("shed_archive zip never follows symlinks: give the path of its target")
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return core.Result{}, core.Errf(core.NotAFile, "Source is not a regular file or folder: %s", in.Src).With("path", in.Src).
			With("zone", z.Label).WithHint("Give a file or folder (see shed_tree)")
	}
	destRel, shownDest, err := zipDest(z, rel, in)
	if err != nil {
		return core.Result{}, err
	}
	// A zip of a tree is work a user starts like a command: it takes one of their command
	// slots (issue 24), so parallel zips cannot take the server's memory and disk.
	release, err := s.AcquireSlot(ctx, c.UserID, core.ZipSlot)
	if err != nil {
		return core.Result{}, err
	}
	defer release()
	src := archive.Source{FS: afero.NewIOFS(z.Fs().Afero()), Path: rel, EmptyDirs: in.IncludeEmptyDirs, Listed: listCap,
		Skip: func(p string) string {
			switch {
			case p == destRel:
				return "the archive being written"
			case confine.IsTempName(p):
				return "a temporary file of a write in progress"
			}
			return core.ProtectedReason(z, p) // a .git in a versioned zone is never shipped
		}}
	plan, err := archive.PlanDir(ctx, src)
	if err != nil {
		return core.Result{}, core.WriteError(err, z, in.Src)
	}
	tx, t, err := s.BeginWrite(ctx, c, z, destRel, shownDest, core.Edit{Tool: "Zip", Message: "Created ZIP: " + destRel})
	if err != nil {
		return core.Result{}, err
	}
	defer tx.Close()
	if t.Exists || t.Symlink {
		return core.Result{}, core.Errf(core.FileExists, "Destination exists: %s", shownDest).With("path", shownDest).With("zone", z.Label).
			WithHint("Choose another dest, or delete the existing file first with shed_delete")
	}
	hash, size, plan, err := writeZip(ctx, tx, z, t, src, plan.MaxSize())
	if err != nil {
		return core.Result{}, err
	}
	return core.Result{Data: zipData(in.Src, destRel, plan, size, hash), Message: zipMessage(plan)}, nil
}

// zipDest is the archive's path: dest with ".zip" added when missing, or the source's path
// plus ".zip" (the zone's name plus ".zip" for the whole zone).
func zipDest(z *core.Zone, rel string, in ZipInput) (string, string, error) {
	if in.Dest == "" {
		if rel == "" {
			return z.Label + ".zip", z.Label + ".zip", nil
		}
		return rel + ".zip", rel + ".zip", nil
	}
	d, err := z.Path(in.Dest, in.AllowZoneInPath)
	if err != nil {
		return "", "", err
	}
	if d == "" {
		return "", "", core.Errf(core.NotAFile, "dest is the zone root, not a file").With("dest", in.Dest).
			WithHint("Give a file name for the archive, e.g. 'backup.zip'")
	}
	if !strings.HasSuffix(strings.ToLower(d), ".zip") {
		d += ".zip"
	}
	return d, d, nil
}

// writeZip streams the archive of src into t, the file of tx in z, and returns what it
// wrote. The reservation is limit, the archive's largest possible size (PlanDir); a
// producer exceeding it (files grown meanwhile) fails the write rather than overshoot the
// quota.
func writeZip(ctx context.Context, tx *core.Tx, z *core.Zone, t core.Target, src archive.Source, limit int64) (string, int64, *archive.Plan, error) {
	var plan *archive.Plan
	body, finish := core.Produced(limit, func(w io.Writer) (err error) {
		plan, err = archive.Create(ctx, w, src)
		return err
	})
	hash, err := tx.WriteFile(core.Write{Size: limit, Body: body})
	// A producer's failure reaches the write through the pipe (and is its error); only the
	// cap deserves its own code.
	if perr := finish(); errors.Is(perr, core.ErrTooBig) {
		return "", 0, nil, core.Errf(core.FileTooLarge, "The source grew while it was compressed").With("path", t.Shown).
			WithHint("Call again once the files stop changing")
	}
	if err != nil {
		return "", 0, nil, err
	}
	fi, err := z.Fs().Stat(t.Rel)
	if err != nil {
		return hash, 0, nil, core.WriteError(err, z, t.Shown)
	}
	return hash, fi.Size(), plan, nil
}

// zipData is the answer of shed_zip: the original's fields, plus what was skipped.
func zipData(src, dest string, plan *archive.Plan, size int64, hash string) zipResult {
	skipped := plan.Skipped
	if skipped == nil {
		skipped = []archive.Skipped{}
	}
	return zipResult{Commit: hash, EmptyDirsCount: plan.EmptyDirs, FilesCount: plan.Files, SizeBytes: size,
		SizeHuman: core.HumanSize(size), Skipped: skipped, SkippedCount: plan.SkippedCount, Source: src, ZipPath: dest}
}

// zipResult is the answer of shed_zip (fields in the order of the JSON keys, alphabetical,
// as the map it replaces wrote them): empty_dirs_count only when folders were stored empty,
// commit only in versioned zones.
type zipResult struct {
	Commit         string            `json:"commit,omitempty"`
	EmptyDirsCount int               `json:"empty_dirs_count,omitempty"`
	FilesCount     int               `json:"files_count"`
	SizeBytes      int64             `json:"size_bytes"`
	SizeHuman      string            `json:"size_human"`
	Skipped        []archive.Skipped `json:"skipped"`
	SkippedCount   int               `json:"skipped_count"`
	Source         string            `json:"source"`
	ZipPath        string            `json:"zip_path"`
}

// zipMessage is the original's message, with the skipped count.
func zipMessage(plan *archive.Plan) string {
	msg := fmt.Sprintf("Created ZIP with %d files", plan.Files)
	if n := plan.EmptyDirs; n > 0 {
		msg += fmt.Sprintf(" and %d empty directories", n)
	}
	if n := plan.SkippedCount; n > 0 {
		msg += fmt.Sprintf("; %d skipped (symlinks, special files: see data.skipped)", n)
	}
	return msg
}
