package core

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/vcs"
)

// Writes beside a command (issue 24): a writing command in a versioned zone runs without the
// zone's gate or repository lock (command_space.go), so single-file writes of other callers
// (shed_create_file, the patches, shed_sqlite: mutateFile) go on while it runs; a group
// member no longer waits up to exec_timeout_max behind another member's command. Each such
// write commits its own file under its own author, as always, and leaves a note in the
// command's besideRun, which the command reads once it has ended, with the gate held
// exclusively again (no write is then between its change and its commit):
//
//   - the quota: the bytes and names the writes added (Change.Growth, what they settle) are not the
//     command's, and the owner's usage is read again then, so the command and the writes
//     cannot jointly overshoot;
//   - the full commit: each write committed its file, so the command's CommitAll finds
//     nothing of it to sweep under the command's author, unless the command changed the file
//     afterwards (then the change is the command's);
//   - the guards and the rollback judge each written file against the write's commit, not
//     against the zone before the command: a file a member wrote beside the command is
//     neither put back nor removed, unless the command changed it afterwards, and then it
//     is put back as the write left it. A protected file created beside the command is
//     protected from it too.
//
// A write whose file the command changes between the write and its commit (a race of
// milliseconds: the file's identity — device, inode, size, mode, link count, modification
// and change times — is taken right after the write and compared under the repository
// lock, before and after the commit) is "contested": the write does not commit the file (or
// its commit is not trusted), and the command's guards put the file back as it was before
// the write when the command was not allowed to change it.
//
// Whole-tree operations (rename, delete, unzip, restore, bridges, maintenance, a write
// through a symlink) still wait for the command (openRepo.turn): their commits take whole
// folders, or everything, and would sweep the running command's half-done changes. In
// Storage, with no commit, every write goes beside the command (plain.go).

// The note is process-local, and the writes beside a command on another replica cannot
// reach it: were they to run, the command would take them for its own changes (its lock
// guard put a locked edit's save back, its quota counted their growth again). So a write
// notes itself only beside a command of its own process; otherwise it holds the space's
// turn shared (holdBeside), which any command holds exclusively, through the Locker, from
// its first measure to its commit: a command on another replica is waited for, as
// whole-tree operations wait.

// Beside is what the writers of one space share, in this process, with a command of this
// process running there: whether one holds the space's turn, and its note of the writes
// beside it. A versioned space's is its open repository's (OpenRepo), an unversioned
// one's (Storage) lives while someone uses it (plain.go).
type Beside struct {
	// Run is the command running in the space without the gate (nil when none); set and
	// cleared with the turn and the gate held exclusively, so a write, which holds one of
	// them shared, sees the same run from its change to its commit. It is process-local: a write on another
	// replica waits for the command instead (holdBeside).
	Run *BesideRun
	// turn tells whether a command of this process holds the space's turn.
	turn turnWatch
}

// turnWatch tells the single-file writes of a space whether a command of this process holds
// the space's turn (holdBeside).
type turnWatch struct {
	mu   sync.Mutex
	held bool
	// taken is closed when a command of this process takes the turn (nil until asked).
	taken chan struct{}
}

// SetCommandTurn records that a command of this process took (true, right after it got it)
// or gives back (false, right before it releases it) the space's turn.
func (r *Beside) SetCommandTurn(held bool) {
	w := &r.turn
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held = held
	if held && w.taken != nil {
		close(w.taken)
		w.taken = nil
	}
}

// commandTurn reports whether a command of this process holds the space's turn and, when
// none does, a channel closed once one takes it.
func (r *Beside) commandTurn() (bool, <-chan struct{}) {
	w := &r.turn
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held {
		return true, nil
	}
	if w.taken == nil {
		w.taken = make(chan struct{})
	}
	return false, w.taken
}

// holdBeside takes what a write holds of z's space, whose writers share r: the space's turn
// shared, so that a command on another replica is waited for, or, while a command of this
// process holds the turn (its run notes the write), the gate shared, so that the write is
// never between the command's measures. The turn alone is enough: every holder of the gate
// exclusively (a command's measures, a whole-tree change) holds the turn exclusively. A wait
// for the turn that a command of this process ends by taking it starts again beside that
// command.
func (s *Service) holdBeside(ctx context.Context, r *Beside, z *Zone) (held, error) {
	for {
		local, taken := r.commandTurn()
		if !local {
			wait, stop := context.WithCancel(ctx)
			go func() {
				select {
				case <-taken:
					stop()
				case <-wait.Done():
				}
			}()
			turn, err := s.hold(wait, spaceKey(KindSpace, z), lock.Shared, "a command or another change in the "+z.Label+" zone")
			stop()
			if err != nil && ctx.Err() == nil && isClosed(taken) {
				continue
			}
			if err != nil {
				return nil, err
			}
			return held{turn}, nil
		}
		gate, err := s.hold(ctx, spaceKey(KindGate, z), lock.Shared, "a change of the whole "+z.Label+" zone")
		if err != nil {
			return nil, err
		}
		if still, _ := r.commandTurn(); still {
			return held{gate}, nil
		}
		gate.Unlock() // the command of this process ended meanwhile: the turn is anyone's again
	}
}

// isClosed reports whether c is closed.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// BesideRun is the note of one command running in a versioned zone: the writes committed
// beside it. A nil *besideRun (no command running, or an unversioned zone) does nothing.
type BesideRun struct {
	// bytes and files are what the writes beside the command added to the zone.
	bytes, files atomic.Int64
	// Writes are the files they wrote, by zone-relative path, the last write of each;
	// written under the repository lock (versioned zones) or mu (unversioned ones, where
	// writes hold only the gate, shared), read by the command with the gate held
	// exclusively.
	Writes map[string]BesideWrite
	mu     sync.Mutex
	// Kept, when set before the command runs, is told each path a write beside the command
	// left intact (as it wrote it, right after it): the command's lock guard then keeps that
	// version of a file another conversation holds, not the one from before the command.
	Kept func(p string)
}

// kept tells Kept about p.
func (r *BesideRun) kept(p string) {
	if r.Kept != nil {
		r.Kept(p)
	}
}

// BesideWrite is what the command must know of one file written beside it.
type BesideWrite struct {
	// st is the file as the write committed it (contested: unknown).
	St unix.Stat_t
	// rev is the commit holding the version to put back when the command changed the file:
	// the write's own commit, or HEAD before it when contested; "" when there is none (the
	// file is removed instead).
	rev       string
	Contested bool
	// Gone says the write removed the file (unversioned zones: a deletion or a rename's
	// source); it is intact while it stays absent.
	Gone bool
}

// Version names the content a file is put back to: HEAD's (the zero value), or a fixed
// commit's (rev "" for none: there was no commit then).
type Version struct {
	Rev   string
	Fixed bool
}

// Version is the version to put a file written beside the command back to.
func (w BesideWrite) Version() Version { return Version{Rev: w.rev, Fixed: true} }

// Ident is a file's identity for the checks of a write beside a command (ok false: absent).
type Ident struct {
	st unix.Stat_t
	ok bool
}

// unchanged reports whether p has the same identity in two takes (false when either could
// not be taken).
func unchanged(written, now map[string]Ident, p string) bool {
	a, okA := written[p]
	b, okB := now[p]
	return okA && okB && a.ok == b.ok && (!a.ok || SameEntry(a.st, b.st))
}

// Grown is what the writes beside the command added so far.
func (r *BesideRun) Grown() Amount {
	if r == nil {
		return Amount{}
	}
	return Amount{Bytes: r.bytes.Load(), Files: r.files.Load()}
}

// grew counts the growth of a write beside the command.
func (r *BesideRun) grew(n Amount) {
	if r != nil {
		r.bytes.Add(n.Bytes)
		r.files.Add(n.Files)
	}
}

// Identities takes the identity of each path (nil when no command runs; empty when the zone
// cannot be opened: every path then counts as changed).
func (r *BesideRun) Identities(z *Zone, paths []string) map[string]Ident {
	if r == nil {
		return nil
	}
	st, err := NewStatter(z)
	if err != nil {
		return map[string]Ident{}
	}
	defer st.Close()
	out := make(map[string]Ident, len(paths))
	for _, p := range paths {
		s, ok := st.Lstat(p)
		out[p] = Ident{s, ok}
	}
	return out
}

// CommitWrite commits paths, just written, beside the command (under l, the repository lock):
// only those the command has not changed since the write, and each is noted for the
// command, with its identity and the commit, or as contested when the command changed it
// before or during the commit (the version to put back is then the one before the write).
// Without a command running it is commit(paths).
func (r *BesideRun) CommitWrite(l *vcs.Locked, z *Zone, paths []string, written map[string]Ident, commit func([]string) (string, error)) (string, error) {
	if r == nil {
		return commit(paths)
	}
	before, err := l.Head()
	if err != nil {
		return "", repoErr(z, err)
	}
	now := r.Identities(z, paths)
	keep := paths[:0:0]
	for _, p := range paths {
		if unchanged(written, now, p) {
			keep = append(keep, p)
		} else {
			r.contest(p, before)
		}
	}
	if len(keep) == 0 {
		return "", nil
	}
	hash, err := commit(keep)
	if err != nil {
		return "", err
	}
	head, err := l.Head()
	if err != nil {
		return "", repoErr(z, err)
	}
	now = r.Identities(z, keep)
	for _, p := range keep {
		if unchanged(written, now, p) {
			r.Writes[p] = BesideWrite{St: now[p].st, rev: head}
			r.kept(p)
		} else {
			r.contest(p, before)
		}
	}
	return hash, nil
}

// noteWrites notes paths, just written in an unversioned zone (no commit to wait for), as
// the writes left them.
func (r *BesideRun) noteWrites(z *Zone, paths []string) {
	if r == nil || len(paths) == 0 {
		return
	}
	now := r.Identities(z, paths)
	r.mu.Lock()
	for _, p := range paths {
		id := now[p]
		r.Writes[p] = BesideWrite{St: id.st, Gone: !id.ok}
	}
	r.mu.Unlock()
	for _, p := range paths {
		if now[p].ok {
			r.kept(p)
		}
	}
}

// contest notes p as contested; before is HEAD before the write's commit. The version to
// put back is the one an earlier contested write kept, else before's.
func (r *BesideRun) contest(p, before string) {
	rev := before
	if earlier := r.Writes[p]; earlier.Contested {
		rev = earlier.rev
	}
	r.Writes[p] = BesideWrite{rev: rev, Contested: true}
}

// Touched is what the command must know of a file written beside it, with whether the file
// is now as that write left it (intact: the file is the write's, not the command's). ok is
// false for a file no write touched.
func (r *BesideRun) Touched(st *Statter, p string) (w BesideWrite, intact, ok bool) {
	if r == nil {
		return BesideWrite{}, false, false
	}
	if w, ok = r.Writes[p]; !ok {
		return w, false, false
	}
	now, exists := st.Lstat(p)
	if w.Gone {
		return w, !w.Contested && !exists, true
	}
	return w, !w.Contested && exists && SameEntry(now, w.St), true
}

// LeftAsWritten reports whether p was written beside the command and is still as that
// write left it.
func (r *BesideRun) LeftAsWritten(z *Zone, p string) bool {
	if r == nil {
		return false
	}
	st, err := NewStatter(z)
	if err != nil {
		return false
	}
	defer st.Close()
	_, intact, _ := r.Touched(st, p)
	return intact
}

// Holds reports whether a file written beside the command lies in folder dir.
func (r *BesideRun) Holds(dir string) bool {
	if r == nil {
		return false
	}
	for p := range r.Writes {
		if strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// Paths lists the files written beside the command.
func (r *BesideRun) Paths() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.Writes))
	for p := range r.Writes {
		out = append(out, p)
	}
	return out
}
