package core

import (
	"io/fs"
)

// The conditional write (issue 37): a step whose Expect names the version its change was
// built from is checked by the transaction itself, under the step's path lock, so that no
// family can forget it and no other writer of fileshed, on any replica, can come between
// the check and the write. Begin compares the file's content hash with Expect (FILE_CHANGED
// when they differ, nothing written); Apply looks again, just before the change runs, that
// the file is still the one Begin hashed (a command of the zone beside the transaction does
// not take the path lock).

// expected is what Begin saw of a step with Expect: the file it hashed (nil when it did
// not exist).
type expected struct {
	info fs.FileInfo
	want string
}

// expect checks step i's Expect against its file as it is now (Begin, under its lock).
func (tx *Tx) expect(i int) error {
	st, t := tx.e.Steps[i], tx.targets[i]
	want, err := CheckExpectedHash(st.Expect)
	if err != nil || want == "" {
		return err
	}
	z, shown := st.Zone, shownOf(st)
	if t.Dir {
		return Errf(InvalidParameter, "expected_hash is for a file; %s is a folder", shown).With("path", shown).With("zone", z.Label).
			WithHint("Call again without expected_hash")
	}
	if tx.seen == nil {
		tx.seen = make([]*expected, len(tx.e.Steps))
	}
	fi, err := z.fs.Stat(st.Path)
	if err != nil {
		fi = nil // missing (or a dangling link): HashNew below
	}
	current, err := FileHash(z, st.Path)
	if err != nil {
		return ReadFail(err, z, shown)
	}
	if current != want {
		return ChangedSince(z, shown, want, current)
	}
	tx.seen[i] = &expected{info: fi, want: want}
	return nil
}

// expectStill checks, inside Apply before the change runs, that every file Begin checked
// against an Expect is still the one it hashed (FILE_CHANGED otherwise).
func (tx *Tx) expectStill() error {
	for i, seen := range tx.seen {
		if seen == nil {
			continue
		}
		st := tx.e.Steps[i]
		switch {
		case seen.info == nil && EntryExists(st.Zone, st.Path):
		case seen.info != nil && !sameFile(seen.info, st.Zone, st.Path):
		default:
			continue
		}
		current, err := FileHash(st.Zone, st.Path)
		if err != nil {
			return ReadFail(err, st.Zone, shownOf(st))
		}
		return ChangedSince(st.Zone, shownOf(st), seen.want, current)
	}
	return nil
}

// ContentHash is the content hash of what WriteFile wrote ("" before).
func (tx *Tx) ContentHash() string { return tx.written }
