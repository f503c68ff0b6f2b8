package core

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"path"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/lock"
)

// The write transaction (issue 23): the one way a tool changes a zone. A tool describes its
// change — the paths, what happens to each, the message, the ownership mode of new files —
// and the kernel does every step each writer used to wire by hand, in one order:
//
//	tx, err := s.Begin(ctx, c, Edit{Tool: "Patch", Steps: []Step{{Zone: z, Path: rel, Op: OpWrite}}})
//	if err != nil { return err }           // protected path, locked, not allowed, busy
//	defer tx.Close()                        // unlocks; settles a reservation left open
//	t := tx.Target(0)                       // the file as it is, under its lock
//	(Edit.Quota: Begin reserved it)          // max_file_size_mb, then the quota
//	hash, err := tx.Apply(func() (Change, error) { ... write ... })
//
// Begin refuses protected paths (protected.go), takes the path locks in the global order,
// describes each path under its lock, refuses a file another conversation holds in a locked
// edit (unless Edit.Unsafe: shed_patch_text's documented safe=false), and applies the group
// ownership modes. Apply records the ownership of the files it creates before they exist,
// moves the records of a moved entry, runs the change inside the zone's versioning (one
// commit in a versioned zone) and settles the reservation with the growth the change
// reports; on any error, what it recorded for files that do not exist is dropped, so
// nothing is left half-done. A lock lost meanwhile (lock.Lease.Lost: a database-backed
// Locker whose session ended) stops the change before it runs and before its commit.

// Op is what a transaction does to one path.
type Op int

const (
	// OpWrite writes a file's whole content: created when missing (with an ownership record
	// in a group zone), replaced when present (through a symlink that stays in the zone).
	OpWrite Op = iota
	// OpRemove removes a file, a link (never its target) or a folder and everything in it.
	OpRemove
	// OpMoveFrom is the entry a move takes away; the next step is its OpMoveTo.
	OpMoveFrom
	// OpMoveTo is where a moved or copied entry lands: whatever is there is replaced (a
	// link is replaced, not followed). It follows its source step (OpMoveFrom or OpCopyFrom).
	OpMoveTo
	// OpCopyFrom is what a copy reads: not changed, so neither locked nor checked, but the
	// names of a folder are checked against the destination's protected paths.
	OpCopyFrom
	// OpAdd makes new entries in a folder (an import under a fresh name, an archive
	// extracted whole): nothing is replaced, so no path lock; the protected paths, the
	// ownership of the folder and the quota still apply.
	OpAdd
)

// Step is one path of a transaction.
type Step struct {
	Zone *Zone
	// Path is zone-relative and clean (Zone.Path); Shown is the path as the model wrote it,
	// for messages ("" = Path).
	Path, Shown string
	Op          Op
	// Expect is the content hash the change was built from (expected_hash: HashNew = the
	// file must not exist; "" = no condition): the transaction refuses the change,
	// FILE_CHANGED, when the file (links followed) holds something else (tx_expect.go).
	Expect string
}

// Edit describes a change for Begin.
type Edit struct {
	// Tool names the change in its commit ("Patch", "shed_restore"); Message is the commit
	// message ("" = "Tool: paths").
	Tool, Message string
	// Mode is the ownership mode of the files it creates in a group zone ("" =
	// group_default_mode).
	Mode string
	// Unsafe lets OpWrite replace a file another conversation holds in a locked edit: only
	// shed_patch_text with safe=false, as documented to the model.
	Unsafe bool
	// Expect is Step.Expect of BeginWrite's one step.
	Expect string
	Steps  []Step
	// Quota, when set, is what the change needs of its owner's quota: Begin reserves it
	// (tx_reserve.go), Tx.Fs's MakeDir charges the folders it makes to it, Apply settles it
	// with the Change's Growth. Unset, only what the kernel's own writes need is reserved.
	Quota *Quota
	// undo marks the transactions of an undo (journal_undo.go): their rows share its batch
	// and name the batch they revert. Only the kernel sets it.
	undo *undoMark
}

// Tx is a write transaction in progress; Close it on every path.
type Tx struct {
	s       *Service
	ctx     context.Context
	c       Caller
	e       Edit
	targets []Target
	locks   held
	r       *reservation
	settled bool
	closed  bool
	// seen is what Begin hashed of the steps with Expect; written is the content hash of
	// what WriteFile wrote (tx_expect.go).
	seen    []*expected
	written string
}

// Begin starts the change e for c: see the package comment above for what it checks. On
// error nothing is held.
func (s *Service) Begin(ctx context.Context, c Caller, e Edit) (*Tx, error) {
	if _, err := s.GroupMode(e.Mode); err != nil {
		return nil, err
	}
	if err := checkProtected(e.Steps); err != nil {
		return nil, err
	}
	var keys []lock.Key
	for _, st := range e.Steps {
		if st.Op != OpCopyFrom && st.Op != OpAdd {
			keys = append(keys, fileKey(st.Zone, st.Path))
		}
	}
	what := "another change of " + shownOf(e.Steps[0])
	locks, err := s.holdAll(ctx, what, keys...)
	if err != nil {
		return nil, err
	}
	tx := &Tx{s: s, ctx: ctx, c: c, e: e, targets: make([]Target, len(e.Steps)), locks: locks}
	if err := tx.check(); err != nil {
		tx.Close()
		return nil, err
	}
	if err := tx.reserveDeclared(); err != nil {
		tx.Close()
		return nil, err
	}
	return tx, nil
}

// checkProtected refuses a step whose path, or the place it reaches through symlinks, is
// protected (protected.go): a write and an addition follow a final link, a remove or a
// move acts on the link itself. What a copy reads is not changed, so not checked.
func checkProtected(steps []Step) error {
	for _, st := range steps {
		if st.Op == OpCopyFrom {
			continue
		}
		if st.Op == OpRemove && KeptClone(st.Path) {
			return Errf(ProtectedPath, "Cannot delete .git directory").With("path", Shorten(shownOf(st))).With("zone", st.Zone.Label).
				WithHint("The .git directory is required for version control")
		}
		follow := st.Op == OpWrite || st.Op == OpAdd
		if err := CheckProtectedTarget(st.Zone, st.Zone.Fs(), st.Path, shownOf(st), follow); err != nil {
			return err
		}
	}
	return nil
}

// shownOf is how a step's path is shown to the model.
func shownOf(st Step) string { return cmp.Or(st.Shown, st.Path) }

// check describes every path under its lock and applies the rules of each step.
func (tx *Tx) check() error {
	s, ctx, c := tx.s, tx.ctx, tx.c
	for i, st := range tx.e.Steps {
		t, err := describe(st)
		if err != nil {
			return err
		}
		tx.targets[i] = t
		if err := tx.expect(i); err != nil {
			return err
		}
		z := st.Zone
		switch st.Op {
		case OpWrite:
			kind := WriteCreate
			if t.Exists {
				kind = WriteModify
				if !tx.e.Unsafe {
					if err := s.checkUnlocked(ctx, c, z, st.Path); err != nil {
						return err
					}
				}
			}
			if err := s.CheckGroupWrite(ctx, c, z, kind, st.Path); err != nil {
				return err
			}
		case OpRemove, OpMoveFrom:
			if err := s.checkTreeUnlocked(ctx, c, z, st.Path); err != nil {
				return err
			}
			if err := s.CheckGroupWrite(ctx, c, z, WriteDelete, st.Path); err != nil {
				return err
			}
		case OpMoveTo:
			if t.Exists {
				if err := s.checkTreeUnlocked(ctx, c, z, st.Path); err != nil {
					return err
				}
			}
			if err := s.CheckGroupWrite(ctx, c, z, writeReplace, st.Path); err != nil {
				return err
			}
			if i > 0 && tx.targets[i-1].Dir && z.Versioned {
				src := tx.e.Steps[i-1]
				if err := protectedBelow(src.Zone, src.Path, z, st.Path); err != nil {
					return err
				}
			}
		case OpAdd:
			if err := s.CheckGroupWrite(ctx, c, z, WriteCreate, st.Path); err != nil {
				return err
			}
		}
	}
	return nil
}

// describe stats the path of st as its op needs: a written file through its symlinks (a
// folder is NOT_A_FILE), any other entry itself (a link is not followed); the source of a
// remove, a move or a copy must exist.
func describe(st Step) (Target, error) {
	z, rel, shown := st.Zone, st.Path, shownOf(st)
	switch st.Op {
	case OpWrite:
		return StatTarget(z, rel, shown)
	case OpAdd:
		return Target{Rel: rel, Shown: shown}, nil
	}
	t := Target{Rel: rel, Shown: shown}
	fi, _, err := z.fs.LstatIfPossible(rel)
	switch {
	case err == nil:
		t.Exists, t.Dir, t.Symlink = true, fi.IsDir(), fi.Mode()&fs.ModeSymlink != 0
		if fi.Mode().IsRegular() {
			t.Size = fi.Size()
		}
		t.Info = fi
	case errors.Is(err, fs.ErrNotExist) && st.Op == OpMoveTo:
	case errors.Is(err, fs.ErrNotExist):
		return t, PathNotFound(err, z, shown)
	default:
		return t, WriteError(err, z, shown)
	}
	return t, nil
}

// protectedBelow refuses bringing the folder src of zone from to dst of the versioned zone
// to when a name below it is protected there (a .git carried in by a move or a copy).
func protectedBelow(from *Zone, src string, to *Zone, dst string) error {
	var bad error
	errStop := errors.New("stop")
	err := walkNames(from, src, func(rel string) error {
		if confine.IsTempName(path.Base(rel)) {
			return nil // a write in flight in the source: a copy skips it (copy.go)
		}
		if why := ProtectedReason(to, path.Join(dst, rel)); why != "" {
			bad = CheckProtected(to, path.Join(dst, rel), path.Join(dst, rel))
			return errStop
		}
		return nil
	})
	if bad != nil {
		return bad
	}
	if err != nil && !errors.Is(err, errStop) {
		return WriteError(err, from, src)
	}
	return nil
}

// walkNames calls fn with the path, relative to dir, of every entry below the folder dir
// of z (links are not followed).
func walkNames(z *Zone, dir string, fn func(rel string) error) error {
	f, err := z.fs.Open(dir)
	if err != nil {
		return err
	}
	entries, err := f.Readdir(-1)
	_ = f.Close()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := fn(e.Name()); err != nil {
			return err
		}
		if e.IsDir() {
			err := walkNames(z, path.Join(dir, e.Name()), func(rel string) error { return fn(path.Join(e.Name(), rel)) })
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckReplace checks, inside Apply, a file the change is about to replace when it may
// not be a step of Begin's or may have changed since: an archive's file replaced at its
// own rename, after a long extraction during which another conversation may have created
// it, or opened a locked edit of it (lockedit's open does not take the path lock). It is
// FILE_LOCKED when another conversation holds rel in a locked edit now (unless
// Edit.Unsafe), then the group ownership rule of a replacement and PROTECTED_PATH.
func (tx *Tx) CheckReplace(z *Zone, rel string) error {
	if err := CheckProtectedTarget(z, z.Fs(), rel, rel, false); err != nil {
		return err
	}
	if !tx.e.Unsafe {
		if err := tx.s.checkUnlocked(tx.ctx, tx.c, z, rel); err != nil {
			return err
		}
	}
	return tx.s.CheckGroupWrite(tx.ctx, tx.c, z, writeReplace, rel)
}

// Target is step i's path as it was when Begin took its lock.
func (tx *Tx) Target(i int) Target { return tx.targets[i] }

// reserve checks the resulting file size against max_file_size_mb (size -1: no single
// file) and reserves growth for z's owner (QUOTA_EXCEEDED when it does not fit); nothing
// touches the disk before it succeeds. More calls reserve more. In a versioned zone the
// history the commit will add is reserved too (historyEstimate), and settled exactly.
func (tx *Tx) reserve(z *Zone, size int64, growth Amount) error {
	history := historyEstimate(z, size, growth)
	if tx.r != nil {
		if err := tx.s.CheckSize(size); err != nil {
			return err
		}
		return tx.r.Grow(tx.ctx, Amount{Bytes: max(growth.Bytes, 0) + history, Files: max(growth.Files, 0)})
	}
	r, err := tx.s.reserve(tx.ctx, z, size, growth, history)
	if err != nil {
		return err
	}
	tx.r = r
	return nil
}

// Apply runs fn, the change itself, and finishes the transaction: ownership records of the
// files it creates are written first (a record without its file is ignored; a file without
// a record would be open to every member), records of a moved entry move with it, fn runs
// inside the versioning of the zone it changes (one commit in a versioned zone: Documents
// or a group), and the reservation is settled with the Growth fn reports (also on error: a
// delete that stopped half-way gives back what it freed). It returns the commit id ("" when
// none).
func (tx *Tx) Apply(fn func() (Change, error)) (string, error) {
	s, ctx, c := tx.s, tx.ctx, tx.c
	z, single := tx.changed()
	ends, err := tx.holdEnds(z)
	if err != nil {
		return "", err
	}
	defer ends.release()
	var created []int
	for i, st := range tx.e.Steps {
		if st.Op == OpWrite && !tx.targets[i].Exists {
			created = append(created, i)
		}
	}
	for _, i := range created {
		st := tx.e.Steps[i]
		if err := s.RecordGroupFiles(ctx, c, st.Zone, tx.e.Mode, st.Path); err != nil {
			tx.dropCreated(created)
			return "", err
		}
	}
	var moves []func(moved bool)
	var movedFrom []Step
	for i, st := range tx.e.Steps {
		if st.Op == OpMoveTo && i > 0 && tx.e.Steps[i-1].Op == OpMoveFrom && tx.e.Steps[i-1].Zone == st.Zone {
			done, err := s.moveGroupRecords(ctx, st.Zone, tx.e.Steps[i-1].Path, st.Path)
			if err != nil {
				for _, d := range moves {
					d(false)
				}
				tx.dropCreated(created)
				return "", err
			}
			moves, movedFrom = append(moves, done), append(movedFrom, tx.e.Steps[i-1])
		}
	}
	mut := s.Mutate
	if single {
		mut = s.mutateFile
	}
	var ch Change
	var charge *historyCharge
	j := s.journalTx(tx) // nil: nothing recorded
	if tx.r != nil {
		charge = &historyCharge{owner: tx.r.owner}
	}
	hash, err := mut(ctx, c, z, tx.e.Tool, tx.e.Message, func() (Change, error) {
		// Why here: with a database-backed Locker a lock is lost when its session ends, and
		// another replica may then hold the key; the change must not run, nor be committed.
		if err := tx.locks.check(false); err != nil {
			return Change{}, err
		}
		// Again, now that no command runs in a versioned zone: one may have retargeted a
		// link since Begin (its sweep removes a link to a protected name, but not before
		// it ends).
		if err := checkProtected(tx.e.Steps); err != nil {
			return Change{}, err
		}
		if err := tx.expectStill(); err != nil { // the file is still as the caller read it
			return Change{}, err
		}
		// The journal's rows, pending, before the change: never a change without its row.
		if err := j.begin(); err != nil {
			return Change{}, err
		}
		var err error
		if ch, err = tx.run(z, fn); err == nil && z.Versioned {
			err = tx.locks.check(true)
		}
		ch.charge = charge
		return ch, err
	})
	j.settle(hash, ch, err)
	if tx.r != nil {
		tx.r.Settle(ctx, Amount{Bytes: ch.Growth.Bytes + ch.Outside.Bytes + charge.bytes, Files: ch.Growth.Files + ch.Outside.Files})
		tx.settled = true
	}
	for i, done := range moves {
		done(!EntryExists(movedFrom[i].Zone, movedFrom[i].Path))
	}
	tx.dropCreated(created)
	for _, st := range tx.e.Steps {
		if st.Op == OpRemove && !EntryExists(st.Zone, st.Path) {
			s.DropGroupRecords(ctx, st.Zone, st.Path)
		}
	}
	return hash, err
}

// holdEnds holds, shared, the turn of each unversioned space the change touches besides z,
// where it runs (a bridge's Storage end): a writing command running there, on any replica,
// is waited for, as whole-tree changes wait for one in a versioned zone, so that its
// measure never takes the bridge's file for its own. These turns come before z's own locks
// (an exception to the order of keys within a kind: nobody holding a versioned space's turn
// waits for an unversioned one's).
func (tx *Tx) holdEnds(z *Zone) (held, error) {
	var h held
	seen := map[string]bool{}
	if z != nil {
		seen[z.Space] = true
	}
	for _, st := range tx.e.Steps {
		if st.Op == OpCopyFrom || st.Zone.Versioned || seen[st.Zone.Space] {
			continue
		}
		seen[st.Zone.Space] = true
		le, err := tx.s.hold(tx.ctx, spaceKey(KindSpace, st.Zone), lock.Shared, "a command in the "+st.Zone.Label+" zone")
		if err != nil {
			h.release()
			return nil, err
		}
		h = append(h, le)
	}
	return h, nil
}

// changed is the zone whose versioning the change runs in (the versioned one it changes,
// else the first it changes) and whether it is the write of one known file (then other
// writers of the zone's space go on beside it: mutateFile).
func (tx *Tx) changed() (*Zone, bool) {
	var z *Zone
	n, write := 0, true
	for i, st := range tx.e.Steps {
		if st.Op == OpCopyFrom {
			continue
		}
		n++
		write = write && st.Op == OpWrite && !tx.targets[i].Symlink
		if z == nil || st.Zone.Versioned && !z.Versioned {
			z = st.Zone
		}
	}
	return z, n == 1 && write
}

// dropCreated removes the ownership records of the created files that do not exist (the
// write failed, or never happened).
func (tx *Tx) dropCreated(created []int) {
	for _, i := range created {
		st := tx.e.Steps[i]
		if !EntryExists(st.Zone, st.Path) {
			tx.s.DropGroupRecords(tx.ctx, st.Zone, PhysicalRel(st.Zone, st.Path))
		}
	}
}

// Close ends the transaction: a reservation Apply did not settle is given back, and the
// locks are released. Calling it again does nothing.
func (tx *Tx) Close() {
	if tx.closed {
		return
	}
	tx.closed = true
	if tx.r != nil && !tx.settled {
		tx.r.Settle(tx.ctx, Amount{})
	}
	tx.locks.release()
}
