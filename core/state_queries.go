package core

import (
	"context"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// StateQueries are the questions the families ask the state database, and only those
// (issue 35 item 1: DB() is out of the handle): a user's edit locks, the links
// of shed_link, the records a group lists, the usage a tool shows, a user key's state.
// Ownership records, usage settlement and the command journal are the kernel's own: a
// family cannot reach them through this view.
type StateQueries interface {
	// A user's edit locks (shed_info, encryption); the records of a zone's are the
	// kernel's (EditLocks).
	LocksByUser(ctx context.Context, userID string) ([]store.Lock, error)

	// The download links (shed_link, shed_info).
	SharedKey(ctx context.Context, name string, fresh []byte) ([]byte, error)
	AddLink(ctx context.Context, l store.Link) error
	LinksOf(ctx context.Context, owner string) ([]store.Link, error)
	LinkByID(ctx context.Context, id string) (store.Link, error)
	RevokeLink(ctx context.Context, id, owner string, now time.Time) (store.Link, error)
	UseLink(ctx context.Context, id string, now time.Time) error

	// Reads of the records, the usage and the key state.
	OwnershipUnder(ctx context.Context, groupID, path string) ([]store.Ownership, error)
	Usage(ctx context.Context, o store.Owner) (store.Amount, error)
	SetUserKeyState(ctx context.Context, userID, state string) error
}

var _ StateQueries = (*store.DB)(nil)

// State is the state database as the families may ask it.
func (s *Service) State() StateQueries { return s.db }
