package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"golang.org/x/text/unicode/norm"
)

// maxHops is how many symlinks one resolution may follow (Linux MAXSYMLINKS).
const maxHops = 40

// LstatIfPossible describes name without following a final symlink
// (afero.Lstater); the boolean is always true.
func (f *Fs) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	c, err := f.path("lstat", name)
	if err != nil {
		return nil, true, err
	}
	fi, err := f.root.Lstat(rel(c))
	if err != nil {
		return nil, true, fail("lstat", name, err)
	}
	return f.plainInfo(c, fi), true, nil
}

// ReadlinkIfPossible returns the target of the symlink name as stored
// (afero.LinkReader).
func (f *Fs) ReadlinkIfPossible(name string) (string, error) {
	c, err := f.path("readlink", name)
	if err != nil {
		return "", err
	}
	t, err := f.root.Readlink(rel(c))
	return t, fail("readlink", name, err)
}

// SymlinkIfPossible creates newname as a symlink to oldname (afero.Linker).
// The target is normalised like Clean (NFC, backslashes as separators) but
// its ".." are kept. Absolute targets are ErrEscape, and so is a target that
// resolves outside the zone from the link's directory, with the symlinks that
// exist now followed the way the kernel would. Why we check: os.Root.Symlink
// stores any target, and a subprocess would follow it anywhere.
func (f *Fs) SymlinkIfPossible(oldname, newname string) error {
	const op = "symlink"
	n, err := f.path(op, newname)
	if err == nil {
		err = notRoot(op, newname, n)
	}
	if err != nil {
		return err
	}
	target, err := linkTarget(oldname)
	if err != nil {
		return &PathError{Op: op, Path: oldname, Err: err}
	}
	parent := splitClean(path.Dir(n))
	if _, err := f.walk(parent); err != nil {
		return fail(op, newname, err)
	}
	if _, err := f.walk(append(parent, strings.Split(target, "/")...)); err != nil {
		return fail(op, oldname, err)
	}
	return fail(op, newname, f.root.Symlink(target, n))
}

// linkTarget validates and normalises a symlink target without applying "..".
func linkTarget(t string) (string, error) {
	if t == "" {
		return "", fmt.Errorf("%w: empty symlink target", ErrInvalid)
	}
	if len(t) > MaxPathLen {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrInvalid, MaxPathLen)
	}
	if err := checkRunes(t); err != nil {
		return "", err
	}
	t = strings.ReplaceAll(norm.NFC.String(t), `\`, "/")
	if len(t) > MaxPathLen {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrInvalid, MaxPathLen)
	}
	if strings.HasPrefix(t, "/") {
		return "", fmt.Errorf("%w: absolute symlink target", ErrEscape)
	}
	var parts []string
	for c := range strings.SplitSeq(t, "/") {
		switch {
		case c == "" || c == ".":
		case len(c) > MaxNameLen:
			return "", fmt.Errorf("%w: a component is longer than %d bytes", ErrInvalid, MaxNameLen)
		default:
			parts = append(parts, c)
		}
	}
	if len(parts) == 0 {
		return ".", nil
	}
	if isDrive(parts[0]) {
		return "", fmt.Errorf("%w: Windows drive path", ErrEscape)
	}
	return strings.Join(parts, "/"), nil
}

// Confined checks a path that a SUBPROCESS will open relative to the zone root
// (shed_exec operands) and returns its clean form, which is what the caller
// must pass to the subprocess. The path must be lexically clean, and every
// component that exists, symlinks followed the way the kernel follows them,
// must stay inside the zone; a dangling symlink whose target would be outside
// is ErrEscape; a tail that does not exist yet is fine. Why this is not the
// whole defence: the zone can change between this check and the subprocess's
// open (another command may create a symlink), so the subprocess is also
// confined by the sandbox (Landlock) where the kernel offers it.
func (f *Fs) Confined(name string) (string, error) {
	c, err := f.path("confine", name)
	if err != nil {
		return "", err
	}
	if _, err := f.walk(splitClean(c)); err != nil {
		return "", fail("confine", name, err)
	}
	return c, nil
}

// Resolve returns the zone-relative path that name reaches: every symlink on the way
// followed the way the kernel would (the final one too), a missing tail kept as written
// ("" is the zone root). It is where a write of name lands, for the rules that apply to
// that place rather than to the name given (core's protected paths). ErrEscape when the
// path leaves the zone.
func (f *Fs) Resolve(name string) (string, error) {
	c, err := f.path("resolve", name)
	if err != nil {
		return "", err
	}
	phys, err := f.walk(splitClean(c))
	if err != nil {
		return "", fail("resolve", name, err)
	}
	return strings.Join(phys, "/"), nil
}

// splitClean splits a clean path ("" and "." are the root) into components.
func splitClean(c string) []string {
	if c == "" || c == "." {
		return nil
	}
	return strings.Split(c, "/")
}

// walk resolves parts below the zone root like the kernel would: each
// existing symlink is replaced by its target, and ".." pops the physical
// (already resolved) path. It returns the physical zone-relative components.
// ErrEscape if the path ever climbs above the root or meets an absolute
// target; below a missing component or a file the rest is applied lexically.
// Why one open directory per level: each step is then a single fstatat, so
// hostile deep paths and symlink chains cost linear time.
func (f *Fs) walk(parts []string) ([]string, error) {
	stack := make([]string, 0, len(parts))
	for i := len(parts) - 1; i >= 0; i-- {
		stack = append(stack, parts[i])
	}
	dirs := []*os.Root{f.root} // dirs[i] is the directory out[:i]
	defer func() {
		for _, d := range dirs[1:] {
			d.Close()
		}
	}()
	var out []string
	size, hops := 0, 0
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			if len(out) == 0 {
				return nil, ErrEscape
			}
			size -= len(out[len(out)-1]) + 1
			out = out[:len(out)-1]
			if len(dirs) > len(out)+1 {
				dirs[len(dirs)-1].Close()
				dirs = dirs[:len(dirs)-1]
			}
			continue
		}
		if size += len(c) + 1; size > MaxPathLen+1 {
			return nil, fmt.Errorf("%w: resolves to more than %d bytes", ErrInvalid, MaxPathLen)
		}
		if len(dirs) <= len(out) { // below a missing component or a file: lexical
			out = append(out, c)
			continue
		}
		dir := dirs[len(dirs)-1]
		fi, err := dir.Lstat(c)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, c)
			continue
		case err != nil:
			return nil, err
		case fi.Mode()&fs.ModeSymlink == 0:
			out = append(out, c)
			if fi.IsDir() {
				sub, err := dir.OpenRoot(c)
				if err != nil {
					return nil, err
				}
				dirs = append(dirs, sub)
			}
			continue
		}
		size -= len(c) + 1
		if hops++; hops > maxHops {
			return nil, syscall.ELOOP
		}
		target, err := dir.Readlink(c)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(target, "/") {
			return nil, ErrEscape
		}
		t := strings.Split(target, "/")
		for i := len(t) - 1; i >= 0; i-- {
			stack = append(stack, t[i])
		}
	}
	return out, nil
}
