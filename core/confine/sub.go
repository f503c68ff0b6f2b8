package confine

import (
	"os"
	"path/filepath"

	"github.com/spf13/afero"
)

// Sub opens the directory name as an Fs of its own: names below it cannot leave it, not
// even through a symlink that would stay inside f. Why: a link to a folder must serve that
// folder only, never its siblings in the zone. Close the result.
func (f *Fs) Sub(name string) (*Fs, error) {
	c, err := f.path("open", name)
	if err != nil {
		return nil, err
	}
	r, err := f.root.OpenRoot(rel(c))
	if err != nil {
		return nil, fail("open", name, err)
	}
	return &Fs{root: r, dir: filepath.Join(f.dir, filepath.FromSlash(c)), key: f.key, writePlain: f.writePlain, refuseSealed: f.refuseSealed}, nil
}

// OSFile returns the *os.File under a file this package opened, so that a transfer can use
// the kernel's zero-copy path (sendfile). Its Name is a host path: never show it.
func OSFile(f afero.File) (*os.File, bool) {
	if cf, ok := f.(*file); ok {
		return cf.f, true
	}
	return nil, false
}
