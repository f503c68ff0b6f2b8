package groups

import (
	"context"
	"fmt"
	"strings"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/store"
)

// hintMembers is how many known members an INVALID_OWNER hint names.
const hintMembers = 8

// GroupChownInput is the input of shed_group_chown.
type GroupChownInput struct {
	GroupFileArgs
	NewOwner string `json:"new_owner" required:"true" doc:"User id of a current member"`
}

// GroupChown answers shed_group_chown: the owner hands a file to another member: one a
// source that lists the members names (groups.static, Open WebUI), or, where none does,
// one seen as a member within groups.member_seen_days (core.MemberStateOf).
func (s *Tools) GroupChown(ctx context.Context, c core.Caller, in GroupChownInput) (core.Result, error) {
	to := strings.TrimSpace(in.NewOwner)
	switch {
	case to == "":
		return core.Result{}, core.Errf(core.InvalidOwner, "new_owner is required").With("parameter", "new_owner")
	case !core.ValidID(to):
		return core.Result{}, core.Errf(core.InvalidOwner, "Invalid new_owner format").With("new_owner", core.Shorten(to))
	}
	z, rel, err := s.ZonePath(ctx, c, core.ZoneArgs{Zone: "group", Group: in.Group, AllowZoneInPath: in.AllowZoneInPath}, in.Path, false)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	// The member check runs under the file's lock, after the owner's: the original's order
	// of refusals (FILE_NOT_FOUND, NOT_FILE_OWNER, then INVALID_OWNER).
	old, err := s.ChangeRecord(ctx, c, z, rel, "transfer ownership", func(o *store.Ownership) error {
		if err := s.checkNewOwner(ctx, z.Group, to); err != nil {
			return err
		}
		o.Owner = to
		return nil
	})
	if err != nil {
		return core.Result{}, err
	}
	return core.Result{Data: ownerChanged{Path: old.Path, OldOwner: old.Owner, NewOwner: to},
		Message: fmt.Sprintf("Ownership transferred to '%s'", to)}, nil
}

// checkNewOwner refuses, with INVALID_OWNER and a hint naming a few known members, a user
// who does not count as a member of g.
func (s *Tools) checkNewOwner(ctx context.Context, g core.Group, to string) error {
	st, err := s.MemberStateOf(ctx, g, to)
	if err != nil {
		return err
	}
	if st.Member() {
		return nil
	}
	var e *core.Error
	switch st {
	case core.MemberNotListed:
		e = core.Errf(core.InvalidOwner, "User '%s' is not a member of this group", to)
	case core.MemberLeft:
		e = core.Errf(core.InvalidOwner, "User '%s' is no longer a member of this group", to)
	default:
		e = core.Errf(core.InvalidOwner, "User '%s' has not been seen as a member of this group in the last %d days", to,
			s.Config().Groups.MemberSeenDays)
	}
	r, err := s.Roster(ctx, g, hintMembers)
	if err != nil {
		return err
	}
	known := make([]string, 0, len(r.Members))
	for _, m := range r.Members {
		known = append(known, m.UserID)
	}
	e = e.With("new_owner", to).With("known_members", known).With("member_count", r.Total).With("members_source", r.Source)
	return e.WithHint("%s", ownerHint(r))
}

// ownerHint names the known members (ids, with names) of a roster for INVALID_OWNER.
func ownerHint(r core.Roster) string {
	if len(r.Members) == 0 {
		return "No member of this group is known yet: a member becomes known when one of their requests lists the group"
	}
	names := make([]string, 0, len(r.Members))
	for _, m := range r.Members {
		n := m.UserID
		if m.Name != "" && m.Name != m.UserID {
			n += " (" + shortName(m.Name) + ")"
		}
		names = append(names, n)
	}
	hint := "Give the user id of a member: " + strings.Join(names, ", ")
	if more := r.Total - len(r.Members); more > 0 {
		hint += fmt.Sprintf(" and %d more (shed_group(action='info') lists them)", more)
	}
	if !r.Complete {
		hint += "; members are those this server has seen"
	}
	return hint
}

// shortName bounds a display name in a hint to 40 bytes.
func shortName(n string) string {
	if len(n) <= 40 {
		return n
	}
	return strings.ToValidUTF8(n[:40], "") + "…"
}
