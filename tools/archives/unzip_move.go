package archives

import (
	"errors"
	"io/fs"
	"path"
	"sort"

	"github.com/fileshed/fileshed/core"
)

// mover moves the content of a staging folder into its destination, merging into folders
// that exist. What it moved fresh can be moved back (undo); a file it replaced (overwrite)
// is gone, as asked.
type mover struct {
	z *core.Zone
	// w writes the zone: the transaction's file system.
	w         *core.TxFs
	overwrite bool
	// check is asked about each existing file just before overwrite replaces it.
	check func(dst string) error
	// dry only checks: nothing is moved (dryRun).
	dry bool
	// paths are the moved paths, for the commit (a moved folder stands for its content).
	paths []string
	// done are the fresh moves (staging path, destination), for undo.
	done [][2]string
	// dirs are the folders that gained entries, synced at the end.
	dirs          map[string]bool
	replaced      int64
	replacedPaths []string
	// merged counts the staged folders merged into folders that existed.
	merged int64
}

// dryRun runs move without moving anything: every file it would replace is checked, and
// what it would refuse is refused, before the first rename.
func (m *mover) dryRun(from, to string) error {
	m.dry = true
	defer func() { m.dry = false }()
	return m.move(from, to)
}

// move moves every entry of the folder from into the folder to.
func (m *mover) move(from, to string) error {
	d, err := m.z.Fs().Open(from)
	if err != nil {
		return err
	}
	entries, err := d.Readdir(-1)
	_ = d.Close()
	if err != nil {
		return err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	if m.dirs == nil {
		m.dirs = map[string]bool{}
	}
	for _, e := range entries {
		src, dst := path.Join(from, e.Name()), path.Join(to, e.Name())
		fi, _, err := m.z.Fs().LstatIfPossible(dst)
		switch {
		case errors.Is(err, fs.ErrNotExist) && m.dry:
			continue
		case errors.Is(err, fs.ErrNotExist):
			if err := m.w.Rename(src, dst); err != nil {
				return err
			}
			m.done = append(m.done, [2]string{src, dst})
		case err != nil:
			return err
		case e.IsDir() && fi.IsDir():
			if !m.dry {
				m.merged++
			}
			if err := m.move(src, dst); err != nil {
				return err
			}
			continue
		case !e.IsDir() && fi.Mode().IsRegular() && m.overwrite:
			if err := m.check(dst); err != nil {
				return err
			}
			if m.dry {
				continue
			}
			if err := m.w.Rename(src, dst); err != nil {
				return err
			}
			m.replaced += fi.Size()
			m.replacedPaths = append(m.replacedPaths, dst)
		default:
			return core.Errf(core.FileExists, "Destination %s appeared during the extraction", dst).With("path", dst).
				With("zone", m.z.Label).WithHint("Nothing was extracted: call again")
		}
		m.paths = append(m.paths, dst)
		m.dirs[to] = true
	}
	return nil
}

// undo moves the fresh moves back, newest first (best effort: the staging folder is then
// removed with them).
func (m *mover) undo() {
	for i := len(m.done) - 1; i >= 0; i-- {
		_ = m.w.Rename(m.done[i][1], m.done[i][0])
	}
}

// sync makes the moves durable: every folder that gained an entry is synced. Failures are
// not reported: the files are in place and visible.
func (m *mover) sync() {
	for d := range m.dirs {
		if f, err := m.z.Fs().Open(d); err == nil {
			_ = f.Sync()
			_ = f.Close()
		}
	}
}
