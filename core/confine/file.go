package confine

import (
	"io/fs"
	"os"
	"path"

	"github.com/spf13/afero"
)

// file is the afero.File that Fs returns. Why not *os.File itself: its Name()
// and the *os.PathError values of its methods carry the host path. file reports
// the zone-relative name instead; io.EOF and other plain errors pass unchanged.
type file struct {
	f    *os.File
	name string // clean zone-relative name; "" is the zone root
	fs   *Fs    // the Fs that opened it: a sealed one lists plaintext sizes
}

var _ afero.File = (*file)(nil)

// Name returns the clean zone-relative name ("" for the zone root).
func (f *file) Name() string { return f.name }

// wrap rewrites the os error types that carry the host path.
func (f *file) wrap(err error) error {
	switch e := err.(type) {
	case *os.PathError:
		return &PathError{Op: e.Op, Path: f.name, Err: bare(e.Err)}
	case *os.LinkError:
		return &PathError{Op: e.Op, Path: f.name, Err: bare(e.Err)}
	case *os.SyscallError:
		return &PathError{Op: e.Syscall, Path: f.name, Err: bare(e.Err)}
	}
	return err
}

// The methods below delegate to *os.File and rewrite its errors with wrap.

func (f *file) Close() error { return f.wrap(f.f.Close()) }

func (f *file) Read(p []byte) (int, error) {
	n, err := f.f.Read(p)
	return n, f.wrap(err)
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.f.ReadAt(p, off)
	return n, f.wrap(err)
}

func (f *file) Seek(offset int64, whence int) (int64, error) {
	n, err := f.f.Seek(offset, whence)
	return n, f.wrap(err)
}

func (f *file) Write(p []byte) (int, error) {
	n, err := f.f.Write(p)
	return n, f.wrap(err)
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.f.WriteAt(p, off)
	return n, f.wrap(err)
}

func (f *file) WriteString(s string) (int, error) {
	n, err := f.f.WriteString(s)
	return n, f.wrap(err)
}

func (f *file) Readdir(count int) ([]os.FileInfo, error) {
	fis, err := f.f.Readdir(count)
	if f.fs != nil && f.fs.key != nil {
		for i, fi := range fis {
			fis[i] = f.fs.plainInfo(path.Join(f.name, fi.Name()), fi)
		}
	}
	return fis, f.wrap(err)
}

// ReadDir lists the directory with each entry's type from the directory itself (no stat per
// entry): walks of large zones read names and types only.
func (f *file) ReadDir(n int) ([]fs.DirEntry, error) {
	des, err := f.f.ReadDir(n)
	if f.fs != nil && f.fs.key != nil {
		for i, d := range des {
			des[i] = dirEntry{DirEntry: d, fs: f.fs, dir: f.name}
		}
	}
	return des, f.wrap(err)
}

func (f *file) Readdirnames(n int) ([]string, error) {
	names, err := f.f.Readdirnames(n)
	return names, f.wrap(err)
}

// Stat describes the open file. For the zone root the name is "." rather than
// the host directory's own name.
func (f *file) Stat() (os.FileInfo, error) {
	fi, err := f.f.Stat()
	if err != nil {
		return nil, f.wrap(err)
	}
	return namedInfo{FileInfo: fi, name: path.Base(rel(f.name))}, nil
}

func (f *file) Sync() error { return f.wrap(f.f.Sync()) }

func (f *file) Truncate(size int64) error { return f.wrap(f.f.Truncate(size)) }

// namedInfo overrides the name of a FileInfo.
type namedInfo struct {
	fs.FileInfo
	name string
}

func (i namedInfo) Name() string { return i.name }
