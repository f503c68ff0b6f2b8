package core

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/fileshed/fileshed/core/owui"
)

// Group is a group the caller belongs to. Members lists its user ids when the source says
// (groups.static, Open WebUI with member lists); MembersKnown is false otherwise (headers).
type Group struct {
	ID, Name     string
	Members      []string
	MembersKnown bool
}

// Memberships lists the caller's groups from every configured source: the request itself
// (headers mode, a jwt groups claim), the static valves map, and Open WebUI (session mode,
// with the user's token). available=false means no source is configured at all. What a
// request states is recorded as seen (members.go): this is where a request's groups are
// known.
func (s *Service) Memberships(ctx context.Context, c Caller) (groups []Group, available bool, err error) {
	if c.vouched {
		return []Group{{ID: c.Groups[0], Name: c.Groups[0]}}, true, nil
	}
	if c.Groups != nil {
		available = true
		for _, id := range c.Groups {
			groups = append(groups, Group{ID: id, Name: id})
		}
	}
	if len(s.cfg.Groups.Static) > 0 {
		available = true
		for id, members := range s.cfg.Groups.Static {
			if slices.Contains(members, c.UserID) {
				groups = append(groups, Group{ID: id, Name: id, Members: slices.Clone(members), MembersKnown: true})
			}
		}
	}
	if s.owui != nil && c.Token() != "" {
		available = true
		remote, err := s.owui.Groups(ctx, c.Token())
		if err != nil {
			if errors.Is(err, owui.ErrUnauthorized) {
				return nil, true, Errf(AuthInvalid, "Open WebUI refused the session while listing groups").Because(err)
			}
			return nil, true, Errf(AuthUnavailable, "Open WebUI did not answer the group list").Because(err)
		}
		for _, g := range remote { // the caller's own groups; a member list must still name it
			if g.UserIDs == nil || slices.Contains(g.UserIDs, c.UserID) {
				groups = append(groups, Group{ID: g.ID, Name: g.Name, Members: g.UserIDs, MembersKnown: g.UserIDs != nil})
			}
		}
	}
	groups = mergeGroups(groups)
	// Recorded only when the request stated its groups (a header, a token claim) or Open
	// WebUI was asked: groups.static alone is complete already, and a request that said
	// nothing must not mark the caller as having left the groups other requests listed.
	if c.Groups != nil || c.Token() != "" && s.owui != nil {
		s.noteMembers(ctx, c, groups)
	}
	return groups, available, nil
}

// mergeGroups keeps one entry per group id (a group may come from several sources): the
// first name seen, and the member lists of every source that knows them.
func mergeGroups(in []Group) []Group {
	var out []Group
	at := map[string]int{}
	for _, g := range in {
		i, seen := at[g.ID]
		if !seen {
			at[g.ID] = len(out)
			out = append(out, g)
			continue
		}
		if g.MembersKnown {
			m := &out[i]
			for _, u := range g.Members {
				if !slices.Contains(m.Members, u) {
					m.Members = append(m.Members, u)
				}
			}
			m.MembersKnown = true
		}
	}
	return out
}

// resolveGroup validates a group argument (id or exact name) and checks membership.
func (s *Service) resolveGroup(ctx context.Context, c Caller, group string) (Group, error) {
	if group == "" {
		return Group{}, Errf(MissingParameter, "Group parameter is required for zone='group'").With("zone", "group").
			WithHint("Use: zone='group', group='team-name'")
	}
	if strings.Contains(group, "..") || strings.ContainsAny(group, `/\`) {
		return Group{}, Errf(InvalidGroupID, "Invalid group ID: contains forbidden characters").With("group_id", group).
			WithHint("Group ID cannot contain '..' or path separators")
	}
	if strings.IndexFunc(group, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 || len(group) > 255 {
		return Group{}, Errf(InvalidGroupID, "Group ID contains invalid characters").With("group_id", group)
	}
	groups, available, err := s.Memberships(ctx, c)
	if err != nil {
		return Group{}, err
	}
	if !available {
		return Group{}, Errf(GroupNotAvailable, "Group features are not available")
	}
	var similar []string
	for _, g := range groups {
		if g.ID == group || g.Name == group {
			if !ValidID(g.ID) {
				return Group{}, Errf(InvalidGroupID, "Group id '%s' cannot be used as a folder name", g.ID).With("group_id", g.ID)
			}
			return g, nil
		}
		if strings.EqualFold(g.Name, group) {
			similar = append(similar, g.Name)
		}
	}
	if len(similar) > 0 {
		return Group{}, Errf(GroupNotFound, "Group '%s' not found (name is case-sensitive)", group).
			With("requested", group).With("similar", similar).WithHint("Did you mean: %s?", strings.Join(similar, ", "))
	}
	if !ValidID(group) {
		return Group{}, Errf(GroupNotFound, "Group not found: '%s'", group).With("group_id", group)
	}
	return Group{}, Errf(GroupAccessDenied, "You are not a member of group '%s'", group).With("group_id", group)
}
