package groups

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/store"
)

// The group administration tools (reference §5.40-§5.43). Membership comes from
// memberships(); a non-member is refused by resolveGroup before anything about the group's
// files is read.

// groupInfoMaxFiles bounds the file list of shed_group_info (the original's was unbounded).
const groupInfoMaxFiles = 1000

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
	list := make([]map[string]any, 0, len(groups))
	for _, g := range groups {
		line := map[string]any{"id": g.ID, "name": g.Name, "description": ""}
		if g.MembersKnown {
			line["member_count"] = len(g.Members)
		}
		list = append(list, line)
	}
	return core.Result{Data: map[string]any{"groups": list, "count": len(list)}, Message: fmt.Sprintf("Found %d group(s)", len(list))}, nil
}

// GroupArgs names a group.
type GroupArgs struct {
	Group string `json:"group" required:"true" doc:"Group id or exact name"`
}

// GroupInfo answers shed_group_info: members, files with owner, mode and size, and the usage
// against quota_per_group_mb.
func (s *Tools) GroupInfo(ctx context.Context, c core.Caller, in GroupArgs) (core.Result, error) {
	z, err := s.ResolveZone(ctx, c, "group", in.Group, false)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	g := z.Group
	recs, err := s.DB().OwnershipUnder(ctx, z.GroupID, "")
	if err != nil {
		return core.Result{}, core.OwnershipErr(err)
	}
	byPath := make(map[string]store.Ownership, len(recs))
	for _, o := range recs {
		byPath[o.Path] = o
	}
	files := []map[string]any{}
	var total int64
	count := 0
	err = filepath.WalkDir(z.Fs.Dir(), func(p string, d fs.DirEntry, err error) error {
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
			rel, _ := filepath.Rel(z.Fs.Dir(), p)
			rel = filepath.ToSlash(rel)
			f := map[string]any{"path": rel, "size": info.Size(), "owner": "unknown", "mode": "unknown"}
			if o, ok := byPath[rel]; ok {
				f["owner"], f["mode"] = o.Owner, o.Mode
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
	data := map[string]any{"group_id": g.ID, "name": g.Name, "files": files, "total_files": count,
		"total_size": total, "total_size_human": core.HumanMB(total), "quota": core.UsageLine(used, limit),
		"files_truncated": count > len(files)}
	if g.MembersKnown {
		data["members"], data["member_count"] = g.Members, len(g.Members)
	}
	return core.Result{Data: data, Message: fmt.Sprintf("Group has %d file(s) and %d member(s)", count, len(g.Members))}, nil
}

// GroupFileArgs names a file of a group.
type GroupFileArgs struct {
	GroupArgs
	Path            string `json:"path" required:"true" doc:"File path in the group space"`
	AllowZoneInPath bool   `json:"allow_zone_in_path,omitempty" doc:"Allow a first folder named like the zone"`
}

// ownedRecord resolves the group and path of set_mode/chown and returns the file's record,
// refusing with NOT_FILE_OWNER when the caller does not own it.
func (s *Tools) ownedRecord(ctx context.Context, c core.Caller, in GroupFileArgs, what string) (*core.Zone, store.Ownership, error) {
	z, rel, err := s.ZonePath(ctx, c, core.ZoneArgs{Zone: "group", Group: in.Group, AllowZoneInPath: in.AllowZoneInPath}, in.Path, false)
	if err != nil {
		return nil, store.Ownership{}, err
	}
	o, ok, err := s.DB().Ownership(ctx, z.GroupID, rel)
	if err == nil && ok && !core.EntryExists(z, rel) {
		s.DropGroupRecords(ctx, z, rel)
		ok = false
	}
	switch {
	case err != nil:
		z.Close()
		return nil, o, core.OwnershipErr(err)
	case !ok:
		z.Close()
		return nil, o, core.Errf(core.FileNotFound, "No ownership record for: %s", rel).With("path", rel).With("zone", z.Label).
			WithHint("Only files created by the tools have an owner; see shed_group(action='info')")
	case o.Owner != c.UserID:
		z.Close()
		return nil, o, core.Errf(core.NotFileOwner, "Only the file owner can %s", what).With("path", rel).With("owner", o.Owner)
	}
	return z, o, nil
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
	z, o, err := s.ownedRecord(ctx, c, in.GroupFileArgs, "change the write mode")
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	old := o.Mode
	o.Mode = mode
	if err := s.DB().SetOwnership(ctx, o); err != nil {
		return core.Result{}, core.OwnershipErr(err)
	}
	return core.Result{Data: map[string]any{"path": o.Path, "old_mode": old, "new_mode": mode},
		Message: fmt.Sprintf("File mode changed from '%s' to '%s'", old, mode)}, nil
}

// GroupChownInput is the input of shed_group_chown.
type GroupChownInput struct {
	GroupFileArgs
	NewOwner string `json:"new_owner" required:"true" doc:"User id of a current member"`
}

// GroupChown answers shed_group_chown: the owner hands a file to another current member.
func (s *Tools) GroupChown(ctx context.Context, c core.Caller, in GroupChownInput) (core.Result, error) {
	to := strings.TrimSpace(in.NewOwner)
	switch {
	case to == "":
		return core.Result{}, core.Errf(core.InvalidOwner, "new_owner is required").With("parameter", "new_owner")
	case !core.ValidID(to):
		return core.Result{}, core.Errf(core.InvalidOwner, "Invalid new_owner format").With("new_owner", core.Shorten(to))
	}
	z, o, err := s.ownedRecord(ctx, c, in.GroupFileArgs, "transfer ownership")
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	g := z.Group
	if !g.MembersKnown {
		return core.Result{}, core.Errf(core.InvalidOwner, "Cannot check that '%s' is a member of this group", to).With("new_owner", to).
			WithHint("This server does not know the member list of its groups (headers mode): ask an administrator to use groups.static or Open WebUI")
	}
	if !slices.Contains(g.Members, to) {
		return core.Result{}, core.Errf(core.InvalidOwner, "User '%s' is not a member of this group", to).With("new_owner", to)
	}
	old := o.Owner
	o.Owner = to
	if err := s.DB().SetOwnership(ctx, o); err != nil {
		return core.Result{}, core.OwnershipErr(err)
	}
	return core.Result{Data: map[string]any{"path": o.Path, "old_owner": old, "new_owner": to},
		Message: fmt.Sprintf("Ownership transferred to '%s'", to)}, nil
}
