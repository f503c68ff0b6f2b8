package archive

import (
	"archive/zip"
	"compress/flate"
	"context"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
)

// Level is the deflate level of the archives Create writes: the fastest, measured in
// BENCHMARKS.md against the zip CLI (zip -r uses 6, for a few percent less output).
const Level = flate.BestSpeed

// Skipped is a file or folder left out of an archive, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Plan is what Create will write: the regular files under a source, the empty folders,
// and what was left out. Paths are relative to the file system; Names are entry names.
type Plan struct {
	Files     []PlannedFile
	EmptyDirs []string // entry names, ending in "/"
	Skipped   []Skipped
	Bytes     int64 // total size of the files
}

// PlannedFile is one file of a Plan.
type PlannedFile struct {
	Path, Name string
	Size       int64
	Modified   time.Time
	Exec       bool
}

// portable is the name check of the files put in an archive: any name Open would accept
// (no backslash, control character or invalid UTF-8), with no limit on depth or length.
var portable = Limits{MaxDepth: 1 << 20, MaxNameLength: 1 << 20}

// PlanDir walks src (a clean path in fsys, "" or "." for its root) without following
// symlinks and plans an archive of it: entries are named relative to src's parent folder,
// so a folder's name is the top-level entry (the root's content has no such folder).
// Symlinks, special files and names another system could not read are skipped, as is any
// path skip names. With emptyDirs, folders with no file anywhere below get an entry.
func PlanDir(ctx context.Context, fsys fs.FS, src string, emptyDirs bool, skip Exclude) (*Plan, error) {
	if src == "" {
		src = "."
	}
	base := path.Dir(src) // entry names are relative to it
	p := &Plan{}
	hasFile := map[string]bool{}
	var dirs []string
	err := fs.WalkDir(fsys, src, func(fp string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		name := fp
		if base != "." {
			name = strings.TrimPrefix(fp, base+"/")
		}
		if fp != "." {
			if c, err := cleanName(fp, portable); err != nil || c != fp {
				p.Skipped = append(p.Skipped, Skipped{fp, "the name is not portable (backslash, control character, invalid UTF-8 or not NFC)"})
				return skipDir(d)
			}
			if reason := skipReason(skip, fp); reason != "" {
				p.Skipped = append(p.Skipped, Skipped{fp, reason})
				return skipDir(d)
			}
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			p.Skipped = append(p.Skipped, Skipped{fp, "symlink: not followed, not stored"})
		case d.IsDir():
			if fp != "." {
				dirs = append(dirs, fp)
			}
		case t.IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			p.Files = append(p.Files, PlannedFile{Path: fp, Name: name, Size: fi.Size(), Modified: fi.ModTime(), Exec: fi.Mode()&0o100 != 0})
			p.Bytes += fi.Size()
			for dir := path.Dir(fp); dir != "." && !hasFile[dir]; dir = path.Dir(dir) {
				hasFile[dir] = true
			}
		default:
			p.Skipped = append(p.Skipped, Skipped{fp, "special file (device, pipe or socket): not stored"})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if emptyDirs {
		for _, d := range dirs {
			if !hasFile[d] {
				name := d
				if base != "." {
					name = strings.TrimPrefix(d, base+"/")
				}
				p.EmptyDirs = append(p.EmptyDirs, name+"/")
			}
		}
	}
	return p, nil
}

func skipDir(d fs.DirEntry) error {
	if d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

// MaxSize bounds the size of the archive Create writes for p: deflate's worst case (stored
// blocks: 5 bytes per 16 KiB or part) plus the local and central headers, zip64 extras and
// data descriptors of each entry, and the end records.
func (p *Plan) MaxSize() int64 {
	n := int64(1024)
	for _, f := range p.Files {
		n += f.Size + 5*(f.Size/(16<<10)+1) + 200 + 2*int64(len(f.Name))
	}
	for _, d := range p.EmptyDirs {
		n += 200 + 2*int64(len(d))
	}
	return n
}

// Create writes the archive of p to w, reading the files from fsys. A file that changed
// since the plan is archived as it is now.
func Create(ctx context.Context, w io.Writer, fsys fs.FS, p *Plan) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) { return flate.NewWriter(out, Level) })
	for _, f := range p.Files {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified}
		h.SetMode(0o644)
		if f.Exec {
			h.SetMode(0o755)
		}
		if err := addFile(zw, h, fsys, f.Path); err != nil {
			return err
		}
	}
	for _, d := range p.EmptyDirs {
		h := &zip.FileHeader{Name: d, Method: zip.Store}
		h.SetMode(fs.ModeDir | 0o755)
		if _, err := zw.CreateHeader(h); err != nil {
			return err
		}
	}
	return zw.Close()
}

func addFile(zw *zip.Writer, h *zip.FileHeader, fsys fs.FS, p string) error {
	src, err := fsys.Open(p)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	return err
}

// skipReason asks skip (which may be nil) about p.
func skipReason(skip Exclude, p string) string {
	if skip == nil {
		return ""
	}
	return skip(p)
}
