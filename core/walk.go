package core

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A tree walk for trees a user may have shaped against us (DESIGN §4: a command can build
// anything inside its zone). Full paths fail there: a tree deeper than PATH_MAX (two
// `mkdir -p` of 1,900 levels and a `mv`) has names no path can reach, and one open
// descriptor per level runs out of descriptors when the tree is deeper than the process may
// open. So the walk holds one folder open at a time and moves relative to it: into a child
// with openat(name) and back up with openat(".."), checking that ".." is the folder it came
// from (device and inode); a folder moved meanwhile is found again from the root by name,
// and what moved away is reported. Symbolic links are never followed (O_NOFOLLOW on every
// open), so the walk never leaves the tree.

// walkDirFlags opens a folder of the walk: never through a link, never inherited.
const walkDirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// walkEnt is one name of a folder, with its type as the directory listing tells it.
type walkEnt struct {
	name string
	typ  fs.FileMode // fs.ModeDir, fs.ModeSymlink, 0 for a regular file, other type bits
}

// treeWalk is one walk's callbacks; visit is required, the others optional.
type treeWalk struct {
	// visit is called for each name (rel: root-relative) with its folder open as dirfd; for
	// a folder it says whether to walk into it. An error ends the walk.
	visit func(dirfd int, rel string, e walkEnt) (descend bool, err error)
	// order reorders the names of the folder rel before they are visited.
	order func(rel string, ents []walkEnt) []walkEnt
	// enter is called when the walk goes into the folder rel, leave when it comes back
	// out of it (also when the folder moved away meanwhile). An error of either ends the walk.
	enter func(rel string) error
	leave func(rel string) error
	// problem is told of each folder the walk could not read or lost (rel and cause); the
	// walk goes on without it. Without problem, the first one ends the walk with its error.
	problem func(rel string, err error)
}

// walkFrame is a folder of the walk: its names, the next one to visit, its identity.
type walkFrame struct {
	rel      string
	ents     []walkEnt
	next     int
	dev, ino uint64
}

// errMovedDuringWalk is the problem of a folder that was moved while the walk was inside it.
var errMovedDuringWalk = errors.New("moved during the walk")

// run walks the tree under root (a missing root is an empty tree).
func (w *treeWalk) run(ctx context.Context, root string) error {
	rootFd, err := unix.Open(root, walkDirFlags, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: ".", Err: err}
	}
	defer unix.Close(rootFd)
	cur, err := unix.Dup(rootFd)
	if err != nil {
		return err
	}
	defer func() { unix.Close(cur) }()
	buf := make([]byte, 32<<10) // the listings' read buffer, for the whole walk
	top, err := openFrame(cur, "", buf)
	if err != nil {
		return &fs.PathError{Op: "read", Path: ".", Err: err}
	}
	stack := []walkFrame{top}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next == 0 && w.order != nil {
			f.ents = w.order(f.rel, f.ents)
		}
		if f.next < len(f.ents) {
			e := f.ents[f.next]
			f.next++
			rel := path.Join(f.rel, e.name)
			descend, err := w.visit(cur, rel, e)
			if err != nil {
				return err
			}
			if !descend || e.typ&fs.ModeDir == 0 {
				continue
			}
			child, err := unix.Openat(cur, e.name, walkDirFlags, 0)
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
				continue // removed or replaced since it was listed
			}
			if err == nil {
				var fr walkFrame
				if fr, err = openFrame(child, rel, buf); err == nil && w.enter != nil {
					if err := w.enter(rel); err != nil {
						unix.Close(child)
						return err
					}
				}
				if err == nil {
					unix.Close(cur)
					cur = child
					stack = append(stack, fr)
					continue
				}
				unix.Close(child)
			}
			if err := w.report(rel, err); err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			continue
		}
		// The folder is done: back up to its parent.
		stack = stack[:len(stack)-1]
		if len(stack) == 0 {
			return nil
		}
		if w.leave != nil {
			if err := w.leave(f.rel); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		up, err := unix.Openat(cur, "..", walkDirFlags, 0)
		unix.Close(cur)
		cur = -1
		if err == nil && sameDir(up, &stack[len(stack)-1]) {
			cur = up
			continue
		}
		if err == nil {
			unix.Close(up)
		}
		if cur, stack, err = w.refind(rootFd, stack); err != nil {
			return err
		}
	}
	return nil
}

// refind opens again, from the root and name by name, the deepest folder of stack that
// is still where it was; the folders that moved away are reported and left (the walk goes
// on with their parent).
func (w *treeWalk) refind(rootFd int, stack []walkFrame) (int, []walkFrame, error) {
	fd, err := unix.Dup(rootFd)
	if err != nil {
		return -1, stack, err
	}
	for i := 1; i < len(stack); i++ {
		next, err := unix.Openat(fd, path.Base(stack[i].rel), walkDirFlags, 0)
		if err == nil && sameDir(next, &stack[i]) {
			unix.Close(fd)
			fd = next
			continue
		}
		if err == nil {
			unix.Close(next)
		}
		for j := len(stack) - 1; j >= i && w.leave != nil; j-- {
			if err := w.leave(stack[j].rel); err != nil {
				unix.Close(fd)
				return -1, stack, err
			}
		}
		if rerr := w.report(stack[i].rel, errMovedDuringWalk); rerr != nil {
			unix.Close(fd)
			return -1, stack, rerr
		}
		return fd, stack[:i], nil
	}
	return fd, stack, nil
}

// report hands a problem to w.problem, or returns it when the walk has no problem callback.
func (w *treeWalk) report(rel string, err error) error {
	if w.problem == nil {
		return &fs.PathError{Op: "walk", Path: rel, Err: err}
	}
	w.problem(rel, err)
	return nil
}

// openFrame reads the names of the folder open as fd (through buf), and its identity.
func openFrame(fd int, rel string, buf []byte) (walkFrame, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return walkFrame{}, err
	}
	ents, err := readDirAt(fd, buf)
	return walkFrame{rel: rel, ents: ents, dev: st.Dev, ino: st.Ino}, err
}

// sameDir reports whether fd is the folder of frame f.
func sameDir(fd int, f *walkFrame) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Dev == f.dev && st.Ino == f.ino
}

// readDirAt lists the folder open as fd (not "." nor ".."), reading it through buf.
// Why not os.File.ReadDir: on a file system that does not give types in its listing, it
// stats each name by its full path, which fails (or, with a relative name, stats the wrong
// file) in a tree deeper than PATH_MAX; here such a name is stat'ed relative to fd.
func readDirAt(fd int, buf []byte) ([]walkEnt, error) {
	var ents []walkEnt
	for {
		n, err := unix.ReadDirent(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return ents, err
		}
		if n <= 0 {
			return ents, nil
		}
		for b := buf[:n]; len(b) > 0; {
			if len(b) < offName+1 {
				return ents, errors.New("malformed directory entry")
			}
			reclen := int(*(*uint16)(unsafe.Pointer(&b[offReclen])))
			if reclen <= offName || reclen > len(b) {
				return ents, errors.New("malformed directory entry")
			}
			rec := b[:reclen]
			b = b[reclen:]
			name := rec[offName:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if s := string(name); s != "." && s != ".." && s != "" {
				typ, known := direntType(rec[offType])
				if !known {
					var st unix.Stat_t
					if unix.Fstatat(fd, s, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
						continue // removed since it was listed
					}
					typ = statType(st.Mode)
				}
				ents = append(ents, walkEnt{name: s, typ: typ})
			}
		}
	}
}

// Offsets in a linux_dirent64 record (read field by field: a record may end closer to the
// end of the buffer than the size of unix.Dirent).
const (
	offReclen = int(unsafe.Offsetof(unix.Dirent{}.Reclen))
	offType   = int(unsafe.Offsetof(unix.Dirent{}.Type))
	offName   = int(unsafe.Offsetof(unix.Dirent{}.Name))
)

// direntType is the type bits of a directory entry's d_type (false: not told).
func direntType(t uint8) (fs.FileMode, bool) {
	switch t {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// statType is the type bits of a stat mode.
func statType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	}
	return fs.ModeDevice
}

// maxWalkProblems bounds the problems a walk lists (the count is exact).
const maxWalkProblems = 20

// walkProblems collects what a walk could not read: how many, and the first few as
// "path: cause" (root-relative, shortened: never a host path).
type walkProblems struct {
	count int
	first []string
}

// add records the problem of rel.
func (p *walkProblems) add(rel string, err error) {
	p.count++
	if len(p.first) < maxWalkProblems {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		p.first = append(p.first, Shorten(rel)+": "+err.Error())
	}
}
