package core

import (
	"os"
	"sync"
	"syscall"

	"github.com/fileshed/fileshed/core/confine"
)

// The journal areas the service keeps open (issue 36 §5): a change of Storage keeps its
// before-image in its user's area, so opening the area (a stat and an open) and making its
// folders (objects/, objects/xx/) on every change was paid on every write. An area is
// opened once per user and kept while its folder is the same one (device and inode: a
// folder removed and made again is opened again); the folders made or seen there are
// remembered (imageArea.mkdir). At most maxOpenAreas are kept; past that an area is opened
// for its caller alone, as before.

// maxOpenAreas bounds the areas kept open (one file descriptor each).
const maxOpenAreas = 256

// areaRoot is a journal area kept open: its root (never sealed: each caller shares its
// zone's seal on a copy), the identity of its folder, and the folders made there.
type areaRoot struct {
	fs       *confine.Fs
	dev, ino uint64
	dirs     sync.Map // folder → true
}

// openAreas are the areas kept open, by folder; retired were replaced (their folder was
// made again) and are closed with the service, as a caller may still use them.
type openAreas struct {
	mu      sync.Mutex
	byDir   map[string]*areaRoot
	retired []*areaRoot
}

// openRoot is the area at dir: kept open (root) or, past maxOpenAreas, opened for the
// caller alone (fsys, which the caller closes).
func (s *Service) openRoot(dir string) (root *areaRoot, fsys *confine.Fs, err error) {
	dev, ino, known := dirIdentity(dir)
	as := &s.journal.areas
	as.mu.Lock()
	defer as.mu.Unlock()
	old := as.byDir[dir]
	if old != nil && known && old.dev == dev && old.ino == ino {
		return old, nil, nil
	}
	fsys, err = confine.New(dir) // makes the folder when missing
	if err != nil {
		return nil, nil, err
	}
	dev, ino, known = dirIdentity(dir)
	if !known || old == nil && len(as.byDir) >= maxOpenAreas {
		return nil, fsys, nil
	}
	if old != nil {
		as.retired = append(as.retired, old)
	}
	if as.byDir == nil {
		as.byDir = map[string]*areaRoot{}
	}
	root = &areaRoot{fs: fsys, dev: dev, ino: ino}
	as.byDir[dir] = root
	return root, nil, nil
}

// dirIdentity is the device and inode of the folder dir (known false when it cannot be
// read).
func dirIdentity(dir string) (dev, ino uint64, known bool) {
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), st.Ino, true
}

// closeAreas closes the areas kept open (Service.Close).
func (s *Service) closeAreas() {
	as := &s.journal.areas
	as.mu.Lock()
	defer as.mu.Unlock()
	for _, r := range as.byDir {
		_ = r.fs.Close()
	}
	for _, r := range as.retired {
		_ = r.fs.Close()
	}
	as.byDir, as.retired = nil, nil
}
