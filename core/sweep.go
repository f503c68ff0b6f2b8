package core

import (
	"context"
	"io/fs"
	"os"
	"path"
	"time"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// The crash-leftover sweep: an interrupted write (kill -9, power loss) leaves its temporary
// file beside the target (the rename never happened, so the old content is intact) and an
// unsettled quota reservation. At start-up one background pass walks every zone, removes
// the temporary files older than the process, and reconciles the usage of each owner that
// had some. It runs off the request path: until it reaches an owner, that owner's usage
// may count a dead reservation (writes are refused slightly early, never late).
//
// That is the rule of one server (the SQLite state). Replicas (state.driver postgres) share
// the storage, and a replica starting beside live ones must not take their writes in flight
// for leftovers: there the leader sweeps, and removes only the temporary names of dead
// replicas (replicas.go).

// runningMarker exists in the storage directory while a server runs; finding it at start-up
// means the last server did not stop cleanly (kill -9, power loss), so a write may have died
// between its quota reservation and its temporary file and left no leftover to find: the
// sweep then reconciles every owner, not only those with leftovers.
const runningMarker = ".fileshed-running"

// startSweep starts the background sweep; Close stops it, waits, and removes the marker (a
// clean stop).
func (s *Service) startSweep() {
	marker := s.Layout().RunningMarker()
	_, err := os.Stat(marker)
	crashed := err == nil
	s.recovery.crashed = crashed
	if f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE, 0o600); err == nil { // not os.Create: 0666 minus umask
		f.Close()
	}
	s.recoverCommands() // before the sweep reconciles, and before the server serves
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	complete := false
	s.sweep = func() {
		cancel()
		<-done
		if complete || !crashed { // a reconcile cut short after a crash must run again at the next start
			os.Remove(marker)
		}
	}
	go func() {
		defer close(done)
		complete = s.sweepAll(ctx, crashed, s.staleTemp(ctx))
	}()
}

// stale decides whether a temporary entry of another process is a leftover to remove, from
// the replica that made it ("" for a name of the older form, confine.TempReplica) and its
// modification time (staleTemp).
type stale func(replica string, mod time.Time) bool

// leftover is the rule of every sweep of temporary names in zones (the start-up sweep, the
// leader's, shed_maintenance): a name of this process is a leftover when no write of it
// holds the name (confine.Held: an error path left it), one of another process when stale
// says so.
// Why a name of this process never goes by its file time: file times come from the kernel's
// coarse clock, a tick behind time.Now, so a write made just after the start looks older
// than the server.
func leftover(stale stale, name, replica string, mod time.Time) bool {
	if replica == confine.Replica() {
		return !confine.Held(name)
	}
	return stale(replica, mod)
}

// TempLeftover is the sweeps' rule (leftover) for shed_maintenance's sweep of the editzones:
// whether the temporary name (its last component), modified at mod, is a leftover to remove
// (false for a name that is not a temporary one).
func (s *Service) TempLeftover(ctx context.Context) func(name string, mod time.Time) bool {
	stale := s.staleTemp(ctx)
	return func(name string, mod time.Time) bool {
		replica, temp := confine.TempReplica(name)
		return temp && leftover(stale, path.Base(name), replica, mod)
	}
}

// sweepAll sweeps the zones of every user and group on disk of the leftovers that stale
// picks, and reconciles the usage of every owner with leftovers (of every owner when all).
// It reports whether it went through every owner.
func (s *Service) sweepAll(ctx context.Context, all bool, stale stale) bool {
	for _, kind := range []string{"user", "group"} {
		entries, _ := os.ReadDir(s.Layout().Owners(kind))
		for _, e := range entries {
			if ctx.Err() != nil {
				return false
			}
			if !e.IsDir() || !ValidID(e.Name()) {
				continue
			}
			o := store.Owner{Kind: kind, ID: e.Name()}
			removed := 0
			for _, d := range s.sweepDirs(o) {
				removed += s.sweepLeftovers(ctx, d, stale)
			}
			if removed > 0 || all {
				_, _, _ = s.Reconcile(ctx, o) // a failure leaves the old figure: shed_maintenance repairs it
			}
		}
	}
	return ctx.Err() == nil
}

// sweepDirs are the zone roots of o: its zones' data directories (every conversation's
// Uploads folder included).
func (s *Service) sweepDirs(o store.Owner) []string {
	var dirs []string
	for _, d := range s.ownerDirs(o) {
		dirs = append(dirs, d.dir)
	}
	if o.Kind == "user" {
		convs, _ := os.ReadDir(dirs[0]) // Uploads/{conv}
		dirs = dirs[1:]
		for _, c := range convs {
			if c.IsDir() {
				dirs = append(dirs, s.Layout().UploadsOf(o.ID, c.Name()))
			}
		}
	}
	return dirs
}

// sweepLeftovers removes the temporary files that stale picks under the zone root dir
// (through the confinement layer: a symlink planted by a command is never followed) and
// returns how many it removed. It reads directories with their entries' types and stats
// only the temporary-file names, so a pass over a large zone costs one getdents per folder. A
// staging folder (of an interrupted copy or shed_unzip) goes whole and counts as one.
func (s *Service) sweepLeftovers(ctx context.Context, dir string, stale stale) int {
	zfs, err := confine.New(dir)
	if err != nil {
		return 0 // no such zone yet
	}
	defer zfs.Close()
	removed := 0
	var walk func(p string)
	walk = func(p string) {
		if ctx.Err() != nil {
			return
		}
		f, err := zfs.Open(p)
		if err != nil {
			return // unreadable corners are not ours to judge
		}
		lister, ok := f.(interface {
			ReadDir(int) ([]fs.DirEntry, error)
		})
		var entries []fs.DirEntry
		if ok {
			entries, _ = lister.ReadDir(-1)
		}
		f.Close()
		for _, e := range entries {
			name := e.Name()
			// Why: Clean would read a name such as `a\..` (made by a command) as a path, and
			// walking it would revisit another folder (or loop); such names are not ours.
			if c, err := confine.Clean(name); err != nil || c != name {
				continue
			}
			child := path.Join(p, name)
			replica, temp := confine.TempReplica(name)
			switch {
			case e.IsDir() && temp:
				// A staging folder of an interrupted copy or shed_unzip: never renamed into place.
				if fi, err := e.Info(); err == nil && leftover(stale, name, replica, fi.ModTime()) && zfs.RemoveAll(child) == nil {
					removed++
				}
			case e.IsDir():
				walk(child)
			case e.Type().IsRegular() && temp:
				if fi, err := e.Info(); err == nil && leftover(stale, name, replica, fi.ModTime()) && zfs.Remove(child) == nil {
					removed++
				}
			}
		}
	}
	walk("")
	return removed
}
