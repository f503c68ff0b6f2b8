package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/valves"
)

// The swap: how a built import replaces the storage's zones and state database so that a
// kill -9 at any point leaves a storage that can be finished or rolled back, never a mix
// served as if it were whole.
//
//  1. The staging directory is complete and flushed (one syncfs).
//  2. The marker core.ImportSwapMarker is written, naming the staged names: from here on
//     core.New (serve, every admin command) refuses the storage with the two ways out.
//  3. Name by name: the storage's own is renamed into the staging directory's "previous"
//     folder, then the staged one is renamed into the storage. Nothing is deleted.
//  4. The marker is removed (the import is done), then the staging directory with what the
//     swap moved aside.
//
// `import-original --finish` replays step 3 from where it stopped (each rename is done at
// most once: a staged name already moved in is no longer in the staging directory);
// `--rollback` renames each moved-in name back into the staging directory and the previous
// one back into the storage, then removes the staging directory.

// installNames are the names of a storage directory the import replaces, in swap order: the
// state database's companions before it, the zones last.
var installNames = []string{"fileshed.sqlite-wal", "fileshed.sqlite-shm", "fileshed.sqlite", "groups", "users"}

// swapDirs are the staging storage of base and the folder of it that receives what the swap
// replaces (previousName).
func swapDirs(base string) (staging, prev core.Layout) {
	staging = core.LayoutOf(core.LayoutOf(base).ImportStaging())
	return staging, core.LayoutOf(staging.Top(previousName))
}

// previousName is the folder of the staging directory that receives what the swap replaced.
const previousName = "previous"

// swapStep is called after every rename of the swap ("aside users", "in users"): a test
// seam where a test process kills itself to leave the state a crash leaves.
var swapStep = func(string) {}

// swapMarker is what the marker file holds: the names the staging directory held when the
// swap began (a name not staged is moved aside and not replaced: a stale -wal must never
// meet the new database).
type swapMarker struct {
	Staged []string `json:"staged"`
}

// install swaps the staged storage into base (steps 1 to 4 above).
func (im *importer) install(base string) error {
	if err := syncFS(im.staging); err != nil {
		return err
	}
	var m swapMarker
	for _, name := range installNames {
		if _, err := os.Lstat(core.LayoutOf(im.staging).Top(name)); err == nil {
			m.Staged = append(m.Staged, name)
		}
	}
	if err := os.Mkdir(core.LayoutOf(im.staging).Top(previousName), 0o700); err != nil {
		return err
	}
	if err := writeMarker(base, m); err != nil {
		return err
	}
	return finishSwap(base, m)
}

// finishSwap moves every staged name still in the staging directory into base, the one it
// replaces aside first, then ends the swap (step 3 and 4); it resumes an interrupted one.
func finishSwap(base string, m swapMarker) error {
	staging, prev := swapDirs(base)
	for _, name := range installNames {
		from, cur, old := staging.Top(name), core.LayoutOf(base).Top(name), prev.Top(name)
		staged := slices.Contains(m.Staged, name)
		if staged && !exists(from) {
			continue // moved in before the interruption
		}
		if exists(cur) {
			if exists(old) {
				return fmt.Errorf("%s and %s both exist: move one away by hand", cur, old)
			}
			if err := os.Rename(cur, old); err != nil {
				return err
			}
			swapStep("aside " + name)
		}
		if staged {
			if err := os.Rename(from, cur); err != nil {
				return err
			}
			swapStep("in " + name)
		}
	}
	return endSwap(base)
}

// rollbackSwap puts back what an interrupted swap replaced: each staged name moved in goes
// back to the staging directory, each name moved aside back into base; then the staging
// directory (the import) is removed.
func rollbackSwap(base string, m swapMarker) error {
	staging, prev := swapDirs(base)
	for _, name := range slices.Backward(installNames) {
		from, cur, old := staging.Top(name), core.LayoutOf(base).Top(name), prev.Top(name)
		if slices.Contains(m.Staged, name) && !exists(from) && exists(cur) {
			if err := os.Rename(cur, from); err != nil {
				return err
			}
		}
		if exists(old) {
			if exists(cur) {
				return fmt.Errorf("%s and %s both exist: move one away by hand", cur, old)
			}
			if err := os.Rename(old, cur); err != nil {
				return err
			}
		}
	}
	return endSwap(base)
}

// endSwap makes the renames durable, removes the marker (the storage is whole again), then
// the staging directory with what it holds.
func endSwap(base string) error {
	staging, prev := swapDirs(base)
	for _, d := range []string{base, staging.Base(), prev.Base()} {
		if err := syncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.Remove(core.LayoutOf(base).ImportSwap()); err != nil {
		return err
	}
	if err := syncDir(staging.Base()); err != nil {
		return err
	}
	return os.RemoveAll(staging.Base())
}

// endInterrupted finishes or rolls back the swap an interrupted import left in the storage.
func endInterrupted(cfg *valves.Config, opt importOptions, out io.Writer) error {
	if opt.finish && opt.rollback {
		return errors.New("--finish and --rollback exclude each other")
	}
	base, err := resolvePath(cfg.StorageBasePath)
	if err != nil {
		return err
	}
	if _, err := os.Stat(base); err != nil {
		return fmt.Errorf("the storage directory: %w", err)
	}
	lock, err := core.LockForOperator(base)
	if err != nil {
		return err
	}
	defer lock.Close()
	m, ok, err := readMarker(base)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no interrupted import in %s: nothing to finish or roll back", base)
	}
	if opt.rollback {
		if err := rollbackSwap(base, m); err != nil {
			return err
		}
		fmt.Fprintf(out, "rolled back: %s is the storage it was before the import\n", base)
		return nil
	}
	if err := finishSwap(base, m); err != nil {
		return err
	}
	fmt.Fprintf(out, "finished: %s holds the import (its report was printed by the interrupted run)\n", base)
	return nil
}

// madeBase is what makeBase created: the folders (deepest first) and whether the lock file
// is new.
type madeBase struct {
	dirs []string
	lock string // the lock file's path when the import creates it
}

// makeBase creates base (and its missing parents) and remembers what it created.
func makeBase(base string) (madeBase, error) {
	var m madeBase
	for d := base; !exists(d); d = filepath.Dir(d) {
		m.dirs = append(m.dirs, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	if lock := core.LayoutOf(base).StorageLock(); !exists(lock) {
		m.lock = lock
	}
	return m, os.MkdirAll(base, 0o700)
}

// undo removes what makeBase created, when nothing else was put there since: the lock file,
// then each folder it made while it is empty.
func (m madeBase) undo() {
	if m.lock != "" {
		_ = os.Remove(m.lock)
	}
	for _, d := range m.dirs {
		if os.Remove(d) != nil {
			return
		}
	}
}

// readMarker reads the marker of an interrupted swap in base; ok is false when there is
// none.
func readMarker(base string) (m swapMarker, ok bool, err error) {
	raw, err := os.ReadFile(core.LayoutOf(base).ImportSwap())
	if errors.Is(err, fs.ErrNotExist) {
		return m, false, nil
	}
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil {
		return m, false, fmt.Errorf("%s: %w", core.ImportSwapMarker, err)
	}
	return m, true, nil
}

// writeMarker writes the marker durably: a temporary file synced, renamed, its folder
// synced.
func writeMarker(base string, m swapMarker) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	p := core.LayoutOf(base).ImportSwap()
	f, err := os.OpenFile(p+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(raw)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p+".tmp", p)
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(p))
}

// syncFS flushes the whole file system that holds dir. Why one syncfs instead of an fsync
// per file: the renames must publish only what is on the disk, and one flush of the file
// system costs a fraction of thousands of fsyncs.
func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}

// syncDir makes the renames in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// exists reports whether p names anything (a link is not followed).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
