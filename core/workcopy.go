package core

import (
	"context"
	"io/fs"

	"github.com/fileshed/fileshed/core/confine"
)

// Working copies count against the quota (DESIGN §5, issue 32 item 8): the copy of a locked
// edit lives in the conversation's editzone, outside the zone's data, and holds as many
// bytes as the file. It is charged to the zone's owner from its open, follows every change
// of its size, and is given back when it goes (save, cancel, expiry); Reconcile measures the
// editzones (ownerExtras). Bytes only: a copy takes no name of the file quota.

// WorkingCopySize is the size of the working copy p of the editzone ez: its plaintext size
// when encrypted, 0 when it is missing or not a regular file (a link is never followed).
func WorkingCopySize(ez *confine.Fs, p string) int64 {
	fi, _, err := ez.LstatIfPossible(p)
	if err != nil || fi.Mode()&fs.ModeType != 0 {
		return 0
	}
	return fi.Size()
}

// ChangeWorkingCopy runs write, which makes the working copy p of ez (an editzone of z)
// size bytes, with the growth reserved against z's owner's quota first (QUOTA_EXCEEDED when
// it does not fit: nothing is written), then settled with the size the copy has after it.
// Callers check the file-size limit themselves.
func (s *Service) ChangeWorkingCopy(ctx context.Context, z *Zone, ez *confine.Fs, p string, size int64, write func() error) error {
	old := WorkingCopySize(ez, p)
	r, err := s.Reserve(ctx, z, -1, Amount{Bytes: size - old})
	if err != nil {
		return err
	}
	err = write()
	r.Settle(ctx, Amount{Bytes: WorkingCopySize(ez, p) - old})
	return err
}

// DropWorkingCopy removes the working copy p of ez (RemoveWorkingCopy) and gives its bytes
// back to z's owner.
func (s *Service) DropWorkingCopy(ctx context.Context, z *Zone, ez *confine.Fs, p string) {
	if err := s.ChangeWorkingCopy(ctx, z, ez, p, 0, func() error { RemoveWorkingCopy(ez, p); return nil }); err != nil {
		RemoveWorkingCopy(ez, p) // the quota could not be held: the copy goes anyway, reconcile repairs the count
	}
}

// WorkingCopyChanged settles a change of the working copy p of ez that could not be
// reserved beforehand (a command run on it): before is its size before the change. Between
// the two measures a reconcile may see the change too: that drift is repaired by the next
// shed_maintenance.
func (s *Service) WorkingCopyChanged(ctx context.Context, z *Zone, ez *confine.Fs, p string, before int64) {
	r, err := s.Reserve(context.WithoutCancel(ctx), z, -1, Amount{})
	if err != nil {
		return // drift that shed_maintenance's reconcile repairs
	}
	r.Settle(ctx, Amount{Bytes: WorkingCopySize(ez, p) - before})
}
