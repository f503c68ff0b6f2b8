package core

import (
	"os"
	"path/filepath"
)

// WorkFile is a file of one call's plaintext in the working folder (WorkDir): shed_sqlite's
// CSV export gathers its rows there while the statement runs, before the write transaction
// puts the file into the zone. Its folder is one of WorkTemp's, so a start's sweep removes
// what a killed server left.
type WorkFile struct {
	*os.File
	dir string
}

// NewWorkFile creates the empty file name (0600, open for reading and writing) in a fresh
// private folder of the working folder. Remove it on every path.
func (s *Service) NewWorkFile(name string) (*WorkFile, error) {
	dir, err := s.WorkTemp()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, filepath.Base(name)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &WorkFile{File: f, dir: dir}, nil
}

// Remove closes the file and removes it with its folder. Calling it again does nothing.
func (f *WorkFile) Remove() {
	if f == nil || f.dir == "" {
		return
	}
	_ = f.Close()
	_ = os.RemoveAll(f.dir)
	f.dir = ""
}
