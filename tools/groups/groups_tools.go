package groups

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/store"
)

// The group administration tools (reference §5.40-§5.43). Membership comes from
// memberships(); a non-member is refused by resolveGroup before anything about the group's
// files is read.

// groupInfoMaxFiles bounds the file list of shed_group_info (the original's was unbounded).
const groupInfoMaxFiles = 1000

// groupInfoMaxMembers bounds its member list (member_count is the total).
const groupInfoMaxMembers = 100

// GroupList answers shed_group_list: the caller's groups with their member counts.
func (s *Tools) GroupList(ctx context.Context, c core.Caller) (core.Result, error) {
	groups, available, err := s.Memberships(ctx, c)
	if err != nil {
		return core.Result{}, err
	}
	if !available {
		return core.Result{}, core.Errf(core.GroupNotAvailable, "Group features are not available").
			WithHint("Groups come from Open WebUI (auth mode session), the %s header or groups.static: ask an administrator", s.Config().Groups.Header)
	}
	list := make([]groupLine, 0, len(groups))
	for _, g := range groups {
		line := groupLine{ID: g.ID, Name: g.Name}
		if g.MembersKnown {
			n := len(g.Members)
			line.MemberCount = &n
		}
		list = append(list, line)
	}
	return core.Result{Data: groupList{Groups: list, Count: len(list)}, Message: fmt.Sprintf("Found %d group(s)", len(list))}, nil
}

// GroupArgs names a group.
type GroupArgs struct {
	Group string `json:"group" required:"true" doc:"Group id or exact name"`
}

// GroupInfo answers shed_group_info: members (core.Roster: complete where a source lists
// them, else those seen), files with owner, mode and size, and the usage against
// quota_per_group_mb.
func (s *Tools) GroupInfo(ctx context.Context, c core.Caller, in GroupArgs) (core.Result, error) {
	z, err := s.ResolveZone(ctx, c, "group", in.Group, false)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	g := z.Group
	recs, err := s.State().OwnershipUnder(ctx, z.GroupID, "")
	if err != nil {
		return core.Result{}, core.OwnershipErr(err)
	}
	byPath := make(map[string]store.Ownership, len(recs))
	for _, o := range recs {
		byPath[o.Path] = o
	}
	files := []groupFile{}
	var total int64
	count := 0
	err = filepath.WalkDir(z.Fs().Dir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		count++
		total += info.Size()
		if len(files) < groupInfoMaxFiles {
			rel, _ := filepath.Rel(z.Fs().Dir(), p)
			rel = filepath.ToSlash(rel)
			f := groupFile{Path: rel, Size: info.Size(), Owner: "unknown", Mode: "unknown"}
			if o, ok := byPath[rel]; ok {
				f.Owner, f.Mode = o.Owner, o.Mode
			}
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return core.Result{}, core.Errf(core.InternalError, "Cannot list the files of group '%s'", g.ID).Because(err)
	}
	used, limit, err := s.UsageOf(ctx, z.Owner)
	if err != nil {
		return core.Result{}, core.Errf(core.InternalError, "Cannot read the usage of group '%s'", g.ID).Because(err)
	}
	data := groupInfo{GroupID: g.ID, Name: g.Name, Files: files, TotalFiles: count,
		TotalSize: total, TotalSizeHuman: core.HumanMB(total), Quota: core.UsageLine(used, limit),
		FilesTruncated: count > len(files)}
	r, err := s.Roster(ctx, g, groupInfoMaxMembers)
	if err != nil {
		return core.Result{}, err
	}
	ids, details := make([]string, 0, len(r.Members)), make([]memberDetail, 0, len(r.Members))
	for _, m := range r.Members {
		ids = append(ids, m.UserID)
		d := memberDetail{ID: m.UserID, Name: m.Name}
		if !m.LastSeen.IsZero() {
			d.LastSeen = m.LastSeen.UTC().Format(time.RFC3339)
		}
		details = append(details, d)
	}
	data.Members, data.MemberDetails, data.MemberCount = ids, details, r.Total
	data.MembersComplete, data.MembersSource, data.MembersTruncated = r.Complete, r.Source, r.Total > len(r.Members)
	msg := fmt.Sprintf("Group has %d file(s) and %d member(s)", count, r.Total)
	if !r.Complete {
		msg += fmt.Sprintf(" (members this server has seen in the last %d days)", s.Config().Groups.MemberSeenDays)
	}
	return core.Result{Data: data, Message: msg}, nil
}

// GroupFileArgs names a file of a group.
type GroupFileArgs struct {
	GroupArgs
	Path            string `json:"path" required:"true" doc:"File path in the group space"`
	AllowZoneInPath bool   `json:"allow_zone_in_path,omitempty" doc:"Allow a first folder named like the zone"`
}

// GroupSetModeInput is the input of shed_group_set_mode.
type GroupSetModeInput struct {
	GroupFileArgs
	Mode string `json:"mode" required:"true" enum:"owner,group,owner_ro" doc:"owner, group (all members) or owner_ro (nobody)"`
}

// GroupSetMode answers shed_group_set_mode: the owner changes a file's mode (no commit).
func (s *Tools) GroupSetMode(ctx context.Context, c core.Caller, in GroupSetModeInput) (core.Result, error) {
	if strings.TrimSpace(in.Mode) == "" {
		return core.Result{}, core.Errf(core.MissingParameter, "mode is required").With("parameter", "mode")
	}
	mode, err := s.GroupMode(in.Mode)
	if err != nil {
		return core.Result{}, err
	}
	z, rel, err := s.ZonePath(ctx, c, core.ZoneArgs{Zone: "group", Group: in.Group, AllowZoneInPath: in.AllowZoneInPath}, in.Path, false)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	old, err := s.ChangeRecord(ctx, c, z, rel, "change the write mode", func(o *store.Ownership) error {
		o.Mode = mode
		return nil
	})
	if err != nil {
		return core.Result{}, err
	}
	return core.Result{Data: modeChanged{Path: old.Path, OldMode: old.Mode, NewMode: mode},
		Message: fmt.Sprintf("File mode changed from '%s' to '%s'", old.Mode, mode)}, nil
}
