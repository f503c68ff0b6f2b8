package archive

import (
	"context"
	"io"
	"io/fs"
	"path"
	"time"
)

// Skipped is a file or folder left out of an archive, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Source is what an archive is made of: the file or folder Path (a clean path in FS, "" or
// "." for its root), its entries named relative to Path's parent folder (a folder's name is
// the top-level entry; the root's content has no such folder). With EmptyDirs, folders with
// no file anywhere below get an entry. Skip names paths left out.
type Source struct {
	FS        fs.FS
	Path      string
	EmptyDirs bool
	Skip      Exclude
	// Listed is how many skipped paths a Plan lists; the others are only counted.
	Listed int
}

// Plan sums up an archive of a Source: what PlanDir found, or what Create wrote.
type Plan struct {
	Files, EmptyDirs int
	Skipped          []Skipped // the first Source.Listed
	SkippedCount     int
	Bytes            int64 // total size of the files
	// maxSize bounds the archive: deflate's worst case (stored blocks: 5 bytes per 16 KiB
	// or part) plus the local and central headers, zip64 extras and data descriptors of
	// each entry, and the end records.
	maxSize int64
}

// MaxSize bounds the size of the archive Create writes for the plan's files.
func (p *Plan) MaxSize() int64 { return p.maxSize }

// walk walks src for an archive: each file goes to file and each empty folder (with
// EmptyDirs) to emptyDir, as the walk finds them, and is counted in the plan returned.
func (src Source) walk(ctx context.Context, file func(f plannedFile) error, emptyDir func(name string) error) (*Plan, error) {
	p := &Plan{maxSize: 1024}
	root := src.Path
	if root == "" {
		root = "."
	}
	w := Walker{
		File: func(fp, name string, d fs.DirEntry) error {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			p.Files++
			p.Bytes += fi.Size()
			p.maxSize += fi.Size() + 5*(fi.Size()/(16<<10)+1) + 200 + 2*int64(len(name))
			return file(plannedFile{Path: fp, Name: name, Modified: fi.ModTime(), Exec: fi.Mode()&0o100 != 0})
		},
		Skip: func(s Skipped) {
			if len(p.Skipped) < src.Listed {
				p.Skipped = append(p.Skipped, s)
			}
			p.SkippedCount++
		},
	}
	if src.EmptyDirs {
		w.DirDone = func(_, name string, hasFile bool) error {
			if hasFile {
				return nil
			}
			p.EmptyDirs++
			p.maxSize += 200 + 2*int64(len(name)+1)
			return emptyDir(name + "/")
		}
	}
	if err := Walk(ctx, src.FS, root, path.Dir(root), src.Skip, w); err != nil {
		return nil, err
	}
	return p, nil
}

// plannedFile is one file of an archive.
type plannedFile struct {
	Path, Name string
	Modified   time.Time
	Exec       bool
}

// PlanDir walks src and plans its archive: the counts, the size bound, what is skipped.
// It holds nothing per file: Create walks again.
func PlanDir(ctx context.Context, src Source) (*Plan, error) {
	none := func(plannedFile) error { return nil }
	return src.walk(ctx, none, func(string) error { return nil })
}

// Create writes the archive of src to w, walking it again (a file that changed since the
// plan is archived as it is now), and returns what it wrote. Memory: the listing of the
// folders on the current path, and the archive's central directory (Writer).
func Create(ctx context.Context, w io.Writer, src Source) (*Plan, error) {
	zw := NewWriter(w)
	p, err := src.walk(ctx, func(f plannedFile) error {
		perm := fs.FileMode(0o644)
		if f.Exec {
			perm = 0o755
		}
		in, err := src.FS.Open(f.Path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := zw.File(f.Name, f.Modified, perm)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, in)
		return err
	}, func(name string) error {
		return zw.Dir(name, time.Time{}, 0o755)
	})
	if err != nil {
		return nil, err
	}
	return p, zw.Close()
}

// skipReason asks skip (which may be nil) about p.
func skipReason(skip Exclude, p string) string {
	if skip == nil {
		return ""
	}
	return skip(p)
}
