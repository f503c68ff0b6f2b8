package core

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"path"
	"slices"
)

// The copy core: copies regular files from one zone into another with the write rules of
// every write (size limit, quota reserved first, ownership checked and recorded in group
// zones, atomic writes, one commit in versioned zones). shed_copy_to_group uses it; the
// bridges can too.

// copyItem is one regular file to copy: source and destination zone-relative paths, and
// its size.
type copyItem struct {
	src, dst string
	size     int64
}

// CopyJob is a planned copy from one zone into another.
type CopyJob struct {
	From, To *Zone
	Items    []copyItem
	// skipped are source entries that are not regular files (symlinks, devices), never
	// followed nor copied.
	Skipped []string
	// overwrite allows replacing existing destination files (never folders).
	Overwrite bool
	// mode is the ownership mode of the files created in a group zone.
	Mode string
	// Expect is Step.Expect of the one file copied (expected_hash; a folder's copy refuses it).
	Expect string
}

// PlanCopy lists the regular files of srcRel (a file, or a folder walked without following
// symlinks) with their destinations under dstRel, and checks each against the size limit
// and the destination (FILE_EXISTS unless overwrite, NOT_A_FILE over a folder); runCopy's
// transaction checks the rest (locks, ownership, protected paths).
// A symlink given as the source is refused: its target may be anywhere.
func (s *Service) PlanCopy(job *CopyJob, srcRel, dstRel, shownSrc string) error {
	fi, _, err := job.From.fs.LstatIfPossible(srcRel)
	if err != nil {
		return PathNotFound(err, job.From, shownSrc)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return Errf(NotAFile, "%s is a symbolic link: copy the file it points to instead", shownSrc).With("path", shownSrc).
			With("zone", job.From.Label).WithHint("Links are never copied between zones; give the path of the real file")
	case fi.IsDir():
		if err := s.walkCopy(job, srcRel, dstRel); err != nil {
			return err
		}
	case fi.Mode().IsRegular():
		job.Items = append(job.Items, copyItem{src: srcRel, dst: dstRel, size: fi.Size()})
	default:
		return Errf(NotAFile, "%s is not a regular file", shownSrc).With("path", shownSrc).With("zone", job.From.Label)
	}
	for i := range job.Items {
		it := &job.Items[i]
		if err := s.CheckSize(it.size); err != nil {
			return err.(*Error).With("path", it.src)
		}
		switch dfi, _, err := job.To.fs.LstatIfPossible(it.dst); {
		case err == nil && dfi.IsDir():
			return Errf(NotAFile, "Destination is a folder: %s", it.dst).With("path", it.dst).With("zone", job.To.Label).
				WithHint("Choose another dest_path, or delete the folder first with shed_delete")
		case err == nil && !job.Overwrite:
			return Errf(FileExists, "Destination exists: %s", it.dst).With("path", it.dst).With("zone", job.To.Label).
				WithHint("Use overwrite=true to replace the existing file")
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return WriteError(err, job.To, it.dst)
		}
	}
	return nil
}

// walkCopy adds the regular files under the folder srcRel to job.
func (s *Service) walkCopy(job *CopyJob, srcRel, dstRel string) error {
	d, err := job.From.fs.Open(srcRel)
	if err != nil {
		return PathError(err, job.From, srcRel)
	}
	entries, err := d.Readdir(-1)
	_ = d.Close()
	if err != nil {
		return PathError(err, job.From, srcRel)
	}
	slices.SortFunc(entries, func(a, b fs.FileInfo) int { return cmp.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		src, dst := path.Join(srcRel, e.Name()), path.Join(dstRel, e.Name())
		switch {
		case e.IsDir():
			if err := s.walkCopy(job, src, dst); err != nil {
				return err
			}
		case e.Mode().IsRegular():
			job.Items = append(job.Items, copyItem{src: src, dst: dst, size: e.Size()})
		default:
			job.Skipped = append(job.Skipped, src)
		}
	}
	return nil
}

// RunCopy performs a planned job: destination path locks, the quota growth reserved at
// once, ownership recorded for created files, then every file written atomically inside
// one s.mutate of the destination (one commit). It returns the commit id and the bytes
// written.
func (s *Service) RunCopy(ctx context.Context, c Caller, job *CopyJob, tool, message string) (string, int64, error) {
	if len(job.Items) == 0 {
		return "", 0, nil
	}
	steps := make([]Step, len(job.Items))
	dsts := make([]string, len(job.Items))
	for i, it := range job.Items {
		steps[i] = Step{Zone: job.To, Path: it.dst, Op: OpWrite}
		dsts[i] = it.dst
	}
	if job.Expect != "" {
		if len(steps) != 1 {
			return "", 0, Errf(InvalidParameter, "expected_hash is for one file; this copies %d", len(steps)).
				WithHint("Call again without expected_hash, or copy the file by its own path")
		}
		steps[0].Expect = job.Expect
	}
	tx, err := s.Begin(ctx, c, Edit{Tool: tool, Message: message, Mode: job.Mode, Steps: steps})
	if err != nil {
		return "", 0, err
	}
	defer tx.Close()
	var growth Amount
	for i, it := range job.Items {
		if t := tx.Target(i); t.Exists {
			growth.Bytes += it.size - t.Size
		} else {
			growth.Bytes += it.size
			growth.Files++
		}
	}
	if err := tx.reserve(job.To, -1, growth); err != nil {
		return "", 0, err
	}
	var written int64
	hash, err := tx.Apply(func() (Change, error) {
		ch := Change{Paths: dsts}
		for i, it := range job.Items {
			n, err := copyOne(ctx, tx.r, job.From, job.To, it)
			if err != nil {
				return ch, err
			}
			t := tx.Target(i)
			ch.Growth.Bytes += n - t.Size
			if !t.Exists {
				ch.Growth.Files++
			}
			written += n
		}
		return ch, nil
	})
	return hash, written, err
}

// copyOne copies one file for the reservation r: parents created (0700, counted by r),
// content written atomically (0600).
func copyOne(ctx context.Context, r *reservation, from, to *Zone, it copyItem) (int64, error) {
	if err := r.mkdirAll(ctx, to, path.Dir(it.dst)); err != nil {
		return 0, WriteError(err, to, it.dst)
	}
	src, err := from.fs.Open(it.src)
	if err != nil {
		return 0, PathError(err, from, it.src)
	}
	defer src.Close()
	n, err := to.fs.WriteAtomic(it.dst, src, 0o600)
	if err != nil {
		return 0, WriteError(err, to, it.dst)
	}
	return n, nil
}
