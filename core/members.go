package core

import (
	"cmp"
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/store"
)

// Membership the server has seen (issue 28). Every authenticated request tells the caller's
// groups (Memberships); they are recorded in the state database (store.SeeMembers), so
// that where no source lists a group's members (headers and jwt modes, session mode
// without openwebui.admin_api_key) the server still knows who has been a member, and who
// left. What each identity mode can know is in README "Group spaces".

// seenEvery is how often a user's unchanged groups and name are written again (their
// last_seen): a write per request would be too much, and member_seen_days counts in days.
// A change (a group joined or left, a new name) is written at once.
const seenEvery = 5 * time.Minute

// seenCacheMax bounds the remembered users; past it the memory starts again (it only
// saves writes).
const seenCacheMax = 100_000

// maxSeenGroups bounds the groups recorded for one request; a caller listed in more is
// not recorded at all (marking the rest left would be wrong).
const maxSeenGroups = 1000

// maxNameLen bounds a recorded display name, in bytes.
const maxNameLen = 200

// seenCache remembers, per user, what was last written and when. The stripes order one
// user's writes with this process's memory of them: two requests that disagree (one still
// listing a group, one not) are written in the order the memory keeps.
type seenCache struct {
	mu      sync.Mutex
	last    map[string]seenEntry
	stripes [64]sync.Mutex
}

type seenEntry struct {
	sig string
	at  time.Time
}

// stripe is the lock ordering user's writes.
func (c *seenCache) stripe(user string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(user))
	return &c.stripes[h.Sum32()%uint32(len(c.stripes))]
}

// entry is what was last written for user.
func (c *seenCache) entry(user string) (seenEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.last[user]
	return e, ok
}

// set remembers e for user (forgets it when e is zero).
func (c *seenCache) set(user string, e seenEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil || len(c.last) >= seenCacheMax {
		c.last = map[string]seenEntry{}
	}
	if e == (seenEntry{}) {
		delete(c.last, user)
		return
	}
	c.last[user] = e
}

// noteMembers records that c's request listed groups (Memberships' answer), unless the
// same groups and name were written less than seenEvery ago. A failed write is forgotten,
// so the next request writes again; the tool call itself never fails for it.
func (s *Service) noteMembers(ctx context.Context, c Caller, groups []Group) {
	ids := make([]string, 0, len(groups))
	for _, g := range groups {
		if ValidID(g.ID) { // the ids a zone can have; anything else is never looked up
			ids = append(ids, g.ID)
		}
	}
	if len(ids) > maxSeenGroups {
		return
	}
	slices.Sort(ids)
	name := displayName(c.Name)
	sig := name + "\x00" + strings.Join(ids, "\x00")
	mu := s.seen.stripe(c.UserID)
	mu.Lock()
	defer mu.Unlock()
	now := time.Now()
	if e, ok := s.seen.entry(c.UserID); ok && e.sig == sig && now.Sub(e.at) < seenEvery {
		return
	}
	if err := s.db.SeeMembers(ctx, c.UserID, name, ids, now); err != nil {
		s.seen.set(c.UserID, seenEntry{})
		return
	}
	s.seen.set(c.UserID, seenEntry{sig: sig, at: now})
}

// displayName is a user's name as recorded: no control characters, at most maxNameLen
// bytes (the name comes from a request header or a token claim).
func displayName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, name)
	if len(name) > maxNameLen {
		name = strings.ToValidUTF8(name[:maxNameLen], "") // drops a sequence cut in two
	}
	return strings.TrimSpace(name)
}

// SeeCaller records an authenticated request's groups, for every request and not only the
// group tools: at once where the request says them itself (headers, a jwt claim,
// groups.static); in session mode, where they cost a call to Open WebUI, when this user's
// record is older than seenEvery (a group tool asks Open WebUI anyway, and records).
func (s *Service) SeeCaller(ctx context.Context, c Caller) {
	if c.vouched {
		return
	}
	if c.Token() != "" && s.owui != nil {
		if e, ok := s.seen.entry(c.UserID); ok && time.Since(e.at) < seenEvery {
			return
		}
	}
	_, _, _ = s.Memberships(ctx, c) // errors are the tool's to answer, if it needs groups
}

// The sources of a group's member list (Roster.Source).
const (
	// MembersStatic is groups.static: complete.
	MembersStatic = "groups.static"
	// MembersOpenWebUI is Open WebUI (member lists with the groups, or its admin API with
	// openwebui.admin_api_key in session mode): complete.
	MembersOpenWebUI = "openwebui"
	// MembersSeen is the members this server has seen within groups.member_seen_days: not
	// complete (a member who never called is not in it).
	MembersSeen = "seen"
)

// Roster is what the server can tell of a group's members: at most the number asked,
// with the total, and whether the list is complete.
type Roster struct {
	Source   string
	Complete bool
	Members  []store.Member
	Total    int
}

// KnownGroup is the group id as the server knows it without a caller: its groups.static
// members when it is a static group.
func (s *Service) KnownGroup(id string) Group {
	if members, ok := s.cfg.Groups.Static[id]; ok {
		return Group{ID: id, Name: id, Members: slices.Clone(members), MembersKnown: true}
	}
	return Group{ID: id, Name: id}
}

// listed is the complete member list of g where a source has one: g's own (groups.static,
// or Open WebUI's member lists), else Open WebUI's admin API in session mode with
// openwebui.admin_api_key. ok is false when no source lists the members.
func (s *Service) listed(ctx context.Context, g Group) (members []store.Member, source string, ok bool, err error) {
	if g.MembersKnown {
		source = MembersOpenWebUI
		if _, static := s.cfg.Groups.Static[g.ID]; static {
			source = MembersStatic
		}
		for _, id := range g.Members {
			members = append(members, store.Member{GroupID: g.ID, UserID: id})
		}
		return members, source, true, nil
	}
	key := s.cfg.OpenWebUI.AdminAPIKey
	if s.cfg.Auth.Mode != "session" || s.owui == nil || key == "" {
		return nil, "", false, nil
	}
	users, err := s.owui.GroupMembers(ctx, key, g.ID)
	switch {
	case errors.Is(err, owui.ErrUnauthorized):
		return nil, "", false, Errf(AuthUnavailable, "Open WebUI refused openwebui.admin_api_key while listing the members of '%s'", g.ID).
			Because(err).WithHint("Ask an administrator to check openwebui.admin_api_key (an admin's API key)")
	case err != nil:
		return nil, "", false, Errf(AuthUnavailable, "Open WebUI did not answer the member list of '%s'", g.ID).Because(err).
			WithHint("Try again in a moment; if it persists, ask an administrator to check Open WebUI")
	}
	for _, u := range users {
		members = append(members, store.Member{GroupID: g.ID, UserID: u.ID, Name: displayName(u.Name)})
	}
	return members, MembersOpenWebUI, true, nil
}

// seenSince is the oldest last_seen that still counts (groups.member_seen_days).
func (s *Service) seenSince() time.Time {
	return time.Now().Add(-time.Duration(s.cfg.Groups.MemberSeenDays) * 24 * time.Hour)
}

// Roster lists at most limit members of g: the complete list where a source has one (with
// the name and last_seen this server recorded, when it saw them), else the members seen
// within groups.member_seen_days, most recent first.
func (s *Service) Roster(ctx context.Context, g Group, limit int) (Roster, error) {
	all, source, ok, err := s.listed(ctx, g)
	if err != nil {
		return Roster{}, err
	}
	if !ok {
		ms, total, err := s.db.GroupMembers(ctx, g.ID, s.seenSince(), limit)
		if err != nil {
			return Roster{}, Errf(InternalError, "Cannot read the members of '%s'", g.ID).Because(err)
		}
		return Roster{Source: MembersSeen, Members: ms, Total: total}, nil
	}
	r := Roster{Source: source, Complete: true, Total: len(all), Members: all[:min(limit, len(all))]}
	ids := make([]string, len(r.Members))
	for i, m := range r.Members {
		ids[i] = m.UserID
	}
	seen, err := s.db.MembersNamed(ctx, g.ID, ids)
	if err != nil {
		return Roster{}, Errf(InternalError, "Cannot read the members of '%s'", g.ID).Because(err)
	}
	for i, m := range r.Members {
		if rec, ok := seen[m.UserID]; ok {
			r.Members[i].LastSeen = rec.LastSeen
			r.Members[i].Name = cmp.Or(m.Name, rec.Name)
		}
	}
	return r, nil
}

// MemberState is what the server can tell of one user in one group.
type MemberState int

const (
	// MemberUnknown: no source lists the members, and the user was never seen in the group
	// or not within groups.member_seen_days.
	MemberUnknown MemberState = iota
	// MemberListed: a source that lists the members names the user.
	MemberListed
	// MemberNotListed: a source that lists the members does not name the user.
	MemberNotListed
	// MemberSeen: a request of the user listed the group within groups.member_seen_days,
	// and none since left it.
	MemberSeen
	// MemberLeft: a request of the user no longer listed the group after one that did.
	MemberLeft
)

// Member reports whether st counts as a current member.
func (st MemberState) Member() bool { return st == MemberListed || st == MemberSeen }

// Gone reports whether st shows the user is no longer (or not) a member.
func (st MemberState) Gone() bool { return st == MemberNotListed || st == MemberLeft }

// MemberStateOf tells what the server knows of userID in g: from a source that lists the
// members where there is one, else from the members seen.
func (s *Service) MemberStateOf(ctx context.Context, g Group, userID string) (MemberState, error) {
	all, _, ok, err := s.listed(ctx, g)
	if err != nil {
		return MemberUnknown, err
	}
	if ok {
		if slices.ContainsFunc(all, func(m store.Member) bool { return m.UserID == userID }) {
			return MemberListed, nil
		}
		return MemberNotListed, nil
	}
	m, found, err := s.db.Membership(ctx, g.ID, userID)
	switch {
	case err != nil:
		return MemberUnknown, Errf(InternalError, "Cannot read the members of '%s'", g.ID).Because(err)
	case !found:
		return MemberUnknown, nil
	case !m.Left.IsZero():
		return MemberLeft, nil
	case m.LastSeen.Before(s.seenSince()):
		return MemberUnknown, nil
	}
	return MemberSeen, nil
}
