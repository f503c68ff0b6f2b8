package vcs

import (
	"errors"
	"io"
	"os"
	"path"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"golang.org/x/sys/unix"
)

// errMissing means a parent component of a path does not exist or is a file:
// the path itself does not exist.
var errMissing = errors.New("missing")

// Every directory is opened relative to its parent's descriptor with
// O_NOFOLLOW: a symlink placed in the work tree (say docs -> /etc) is never
// traversed, whatever races a user command plays.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// openRoot opens the work tree itself (a trusted host path given by core).
func (r *Repo) openRoot() (int, error) {
	fd, err := unix.Open(r.workTree, dirFlags, 0)
	if err != nil {
		return -1, corrupt("work tree", err)
	}
	return fd, nil
}

// openDir opens directory rel ("" for the root, which is dup'ed) below
// rootfd, one component at a time. A symlink component is ErrSymlinkInPath;
// a missing or non-directory component is errMissing.
func openDir(rootfd int, rel string) (int, error) {
	fd, err := unix.Dup(rootfd)
	if err != nil || rel == "" {
		return fd, err
	}
	for rest := rel; rest != ""; {
		comp := rest
		if i := indexSlash(rest); i >= 0 {
			comp, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		nfd, err := unix.Openat(fd, comp, dirFlags, 0)
		if err != nil {
			var st unix.Stat_t
			serr := unix.Fstatat(fd, comp, &st, unix.AT_SYMLINK_NOFOLLOW)
			_ = unix.Close(fd)
			if serr == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return -1, ErrSymlinkInPath
			}
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
				return -1, errMissing
			}
			return -1, err
		}
		_ = unix.Close(fd)
		fd = nfd
	}
	return fd, nil
}

func indexSlash(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// modeOf maps a stat mode to the git mode; false for what git cannot store
// (FIFOs, sockets, devices): such files are left out of the repository.
func modeOf(m uint32) (filemode.FileMode, bool) {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		if m&0o100 != 0 {
			return filemode.Executable, true
		}
		return filemode.Regular, true
	case unix.S_IFLNK:
		return filemode.Symlink, true
	}
	return 0, false
}

// unchanged reports whether the stat data proves that old still describes
// the file. Entries modified at or after the index was written are never
// trusted: they may have changed again within the same timestamp tick.
func (r *Repo) unchanged(old *index.Entry, m filemode.FileMode, st *unix.Stat_t) bool {
	return old != nil && old.Mode == m && old.Size == uint32(st.Size) && old.Inode == uint32(st.Ino) &&
		old.ModifiedAt.Equal(time.Unix(st.Mtim.Unix())) && old.CreatedAt.Equal(time.Unix(st.Ctim.Unix())) &&
		old.ModifiedAt.Before(r.s.mtime)
}

// newEntry builds an index entry carrying the stat data git compares.
func newEntry(name string, m filemode.FileMode, h plumbing.Hash, st *unix.Stat_t) *index.Entry {
	return &index.Entry{Name: name, Mode: m, Hash: h,
		CreatedAt: time.Unix(st.Ctim.Unix()), ModifiedAt: time.Unix(st.Mtim.Unix()),
		Dev: uint32(st.Dev), Inode: uint32(st.Ino), UID: st.Uid, GID: st.Gid, Size: uint32(st.Size)}
}

// fileEntry returns the entry for the file or link base in dirfd (full path
// full), stored in the object database; old itself when the stat data proves
// it unchanged; nil when the file is of a kind git cannot store. A file that
// keeps changing while read is retried, then ErrChanged.
func (r *Repo) fileEntry(dirfd int, base, full string, st *unix.Stat_t, old *index.Entry) (*index.Entry, error) {
	m, ok := modeOf(st.Mode)
	if !ok {
		return nil, nil
	}
	if r.unchanged(old, m, st) {
		return old, nil
	}
	var err error
	for try := 0; try < 3; try++ {
		var e *index.Entry
		if m == filemode.Symlink {
			e, err = r.linkEntry(dirfd, base, full, st)
		} else {
			e, err = r.blobEntry(dirfd, base, full, old)
		}
		if !errors.Is(err, ErrChanged) {
			return e, err
		}
		if serr := unix.Fstatat(dirfd, base, st, unix.AT_SYMLINK_NOFOLLOW); serr != nil {
			break
		}
		if m, ok = modeOf(st.Mode); !ok {
			return nil, nil
		}
	}
	return nil, &PathError{Path: full, Err: ErrChanged}
}

// linkEntry stores a symbolic link as git does: a blob holding the target.
// The target is never followed.
func (r *Repo) linkEntry(dirfd int, base, full string, st *unix.Stat_t) (*index.Entry, error) {
	buf := make([]byte, unix.PathMax+1)
	n, err := unix.Readlinkat(dirfd, base, buf)
	if err != nil || n > unix.PathMax || int64(n) != st.Size {
		return nil, ErrChanged
	}
	h, err := r.writeBytes(plumbing.BlobObject, buf[:n])
	if err != nil {
		return nil, err
	}
	return newEntry(full, filemode.Symlink, h, st), nil
}

// blobEntry stores a regular file. A touched but unchanged file costs no write: small
// files are hashed in memory before anything is written (writeObject), larger ones are
// hashed first when an old entry exists.
func (r *Repo) blobEntry(dirfd int, base, full string, old *index.Entry) (*index.Entry, error) {
	fd, err := unix.Openat(dirfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, ErrChanged
	}
	f := os.NewFile(uintptr(fd), path.Base(full))
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, ErrChanged
	}
	m, _ := modeOf(st.Mode)
	if old != nil && st.Size > smallObject {
		h, err := hashObject(plumbing.BlobObject, st.Size, f)
		if err != nil {
			return nil, err
		}
		if h == old.Hash || r.hasObject(h) {
			return newEntry(full, m, h, &st), nil
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
	}
	h, err := r.writeObject(plumbing.BlobObject, st.Size, f)
	if err != nil {
		return nil, err
	}
	return newEntry(full, m, h, &st), nil
}

// child is one directory entry during a scan.
type child struct {
	key  string // the name, plus "/" for a directory: git's sort key
	name string
	dir  bool
	st   unix.Stat_t
}

// scanDir returns, in index order, the entries for everything under the
// directory open as dirfd whose full path is dir ("" for the root). Names
// git must never store (.git and its aliases) are skipped with everything
// under them; symlinks are recorded as links and never entered.
func (r *Repo) scanDir(dirfd int, dir string, out []*index.Entry) ([]*index.Entry, error) {
	dfd, err := unix.Dup(dirfd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dfd), "dir")
	ents, err := f.ReadDir(-1)
	_ = f.Close()
	if err != nil {
		return nil, &PathError{Path: dir, Err: scrub(err)}
	}
	kids := make([]child, 0, len(ents))
	for _, e := range ents {
		if ignoredName(e.Name()) {
			continue
		}
		c := child{key: e.Name(), name: e.Name()}
		if err := unix.Fstatat(dirfd, c.name, &c.st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // removed since ReadDir
		}
		if c.st.Mode&unix.S_IFMT == unix.S_IFDIR {
			c.dir, c.key = true, c.name+"/"
		}
		kids = append(kids, c)
	}
	sort.Slice(kids, func(i, j int) bool { return kids[i].key < kids[j].key })
	for i := range kids {
		c := &kids[i]
		full := c.name
		if dir != "" {
			full = dir + "/" + c.name
		}
		if c.dir {
			sub, err := unix.Openat(dirfd, c.name, dirFlags, 0)
			if err != nil {
				continue // replaced or removed since ReadDir: not a directory we may enter
			}
			out, err = r.scanDir(sub, full, out)
			_ = unix.Close(sub)
			if err != nil {
				return nil, err
			}
			continue
		}
		e, err := r.fileEntry(dirfd, c.name, full, &c.st, r.lookup(full))
		if err != nil {
			return nil, err
		}
		if e != nil {
			out = append(out, e)
		}
	}
	return out, nil
}
