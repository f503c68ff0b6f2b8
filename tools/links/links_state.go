package links

import (
	"context"
	"errors"

	"github.com/fileshed/fileshed/core/store"
)

// States of a link beyond the stored ones (store.LinkActive, LinkExpired, LinkRevoked,
// LinkExhausted): what its download would answer 410 for.
const (
	// LinkChanged: the file or folder is not the one linked (edited, replaced, deleted,
	// swapped for a symlink; restoring a backup makes new files too).
	LinkChanged = "changed"
	// LinkCreatorLeft: a group link whose creator is no longer a member of the group.
	LinkCreatorLeft = "creator_left"
	// LinkUnavailable: the zone cannot be opened now (its encryption key is missing), or
	// shed_link list cannot tell now (Open WebUI did not answer a member list).
	LinkUnavailable = "unavailable"
)

// GoneError is a link that answers 410; State says why (a store state or one above).
type GoneError struct{ State string }

// Error names the state.
func (e *GoneError) Error() string { return "link: gone (" + e.State + ")" }

// Is makes every GoneError an ErrLinkGone.
func (e *GoneError) Is(target error) bool { return target == ErrLinkGone }

// Reason says why the link answers 410, in words for the person who clicked it (the
// page of the download route).
func (e *GoneError) Reason() string {
	switch e.State {
	case store.LinkExpired:
		return "This link has expired."
	case store.LinkRevoked:
		return "This link was revoked by the person who shared it."
	case store.LinkExhausted:
		return "This link was used as many times as it allows."
	case LinkChanged:
		return "The file changed (edited, replaced, deleted or restored from a backup) since this link was made."
	case LinkCreatorLeft:
		return "The person who shared this link is no longer a member of the group that holds the file."
	}
	return "This link cannot be used now."
}

// gone is the GoneError of state.
func gone(state string) error { return &GoneError{State: state} }

// LinkState is what a download of l would answer now: store.LinkActive, or the state of
// its GoneError; LinkUnavailable when that cannot be told now (Open WebUI not answering).
func (s *Tools) LinkState(ctx context.Context, l store.Link) string {
	t, err := s.openStored(ctx, l, "")
	var g *GoneError
	switch {
	case err == nil:
		t.Close()
		return store.LinkActive
	case errors.As(err, &g):
		return g.State
	}
	return LinkUnavailable
}
