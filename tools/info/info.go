package info

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/store"
)

// Parameters answers shed_parameters: the valves a model may need to plan its work. The
// storage path is deliberately not disclosed (the original exposed the host path).
func (s *Tools) Parameters(_ context.Context, _ core.Caller) (core.Result, error) {
	v := s.Config()
	data := parameters{
		QuotaPerUserMB:        v.QuotaPerUserMB,
		QuotaPerGroupMB:       v.QuotaPerGroupMB,
		QuotaFilesPerUser:     v.QuotaFilesPerUser,
		QuotaFilesPerGroup:    v.QuotaFilesPerGroup,
		MaxFileSizeMB:         v.MaxFileSizeMB,
		LockMaxAgeHours:       v.LockMaxAgeHours,
		LockForceAfterMinutes: v.LockForceAfterMinutes,
		ExecTimeoutDefault:    v.ExecTimeoutDefault,
		ExecTimeoutMax:        v.ExecTimeoutMax,
		GroupDefaultMode:      v.GroupDefaultMode,
		NetworkMode:           v.NetworkMode,
		MaxOutputDefault:      v.MaxOutputDefault,
		MaxOutputAbsolute:     v.MaxOutputAbsolute,
		OpenWebUIAPIURL:       v.OpenWebUI.URL,
		Archive: archiveLimits{MaxEntries: v.Archive.MaxEntries, MaxTotalMB: v.Archive.MaxTotalMB,
			MaxRatio: v.Archive.MaxRatio, MaxDepth: v.Archive.MaxDepth, MaxNameLength: v.Archive.MaxNameLength},
		Info: parametersInfo{
			NetworkEnabled:       v.NetworkMode != "disabled",
			NetworkUploadAllowed: v.NetworkMode == "all",
			GroupsAvailable:      s.OpenWebUI() != nil && v.Auth.Mode == "session" || len(v.Groups.Static) > 0 || v.Auth.Mode == "headers",
		},
	}
	return core.Result{Data: data, Message: "Current valve configuration"}, nil
}

// Stats answers shed_stats: size and files of each personal zone (measured), and the quota
// usage as accounted in the state database (what writes are checked against).
func (s *Tools) Stats(ctx context.Context, c core.Caller) (core.Result, error) {
	l, o := s.Layout(), store.Owner{Kind: "user", ID: c.UserID}
	usage := map[string]core.ZoneUsage{}
	for label, dir := range map[string]string{
		"uploads":   l.ZoneRoot(o, core.Uploads),
		"storage":   l.ZoneRoot(o, core.Storage),
		"documents": l.ZoneRoot(o, core.Documents),
	} {
		u, err := s.DirUsage(ctx, o, dir)
		if err != nil {
			return core.Result{}, core.Errf(core.InternalError, "Cannot measure the %s zone", label).Because(err)
		}
		usage[label] = u
	}
	used, limit, err := s.UsageOf(ctx, store.Owner{Kind: "user", ID: c.UserID})
	if err != nil {
		return core.Result{}, err
	}
	line := func(u core.ZoneUsage) zoneLine {
		return zoneLine{SizeBytes: u.SizeBytes, SizeHuman: u.SizeHuman, Files: u.Files, Folders: u.Folders,
			PercentOfQuota: core.Percent(u.SizeBytes, limit.Bytes), Unmeasured: u.Unmeasured}
	}
	data := stats{Uploads: line(usage["uploads"]), Storage: line(usage["storage"]), Documents: line(usage["documents"]),
		Total: totalOf(core.UsageLine(used, limit), core.HumanMB(used.Bytes), s.Config().QuotaPerUserMB)}
	history, err := s.HistoryBytes(ctx, store.Owner{Kind: "user", ID: c.UserID})
	if err != nil {
		return core.Result{}, core.Errf(core.InternalError, "Cannot measure the documents history").Because(err)
	}
	data.Documents.HistoryBytes = &history
	// Group spaces have quotas of their own: one line per group the caller belongs to.
	if groups, available, err := s.Memberships(ctx, c); available && err == nil {
		lines := []groupQuota{}
		for _, g := range groups {
			if !core.ValidID(g.ID) {
				continue
			}
			o := store.Owner{Kind: "group", ID: g.ID}
			used, limit, err := s.UsageOf(ctx, o)
			if err != nil {
				return core.Result{}, err
			}
			history, err := s.HistoryBytes(ctx, o)
			if err != nil {
				return core.Result{}, core.Errf(core.InternalError, "Cannot measure the history of group %s", g.Name).Because(err)
			}
			lines = append(lines, groupQuotaOf(core.UsageLine(used, limit), g.Name, g.ID, history))
		}
		data.Groups = &lines
	}
	locks, err := s.State().LocksByUser(ctx, c.UserID)
	if err != nil {
		return core.Result{}, core.Errf(core.InternalError, "Cannot list your locks").Because(err)
	}
	data.Locks = lockLines(locks, c.ConvID)
	links, err := s.State().LinksOf(ctx, c.UserID)
	if err != nil {
		return core.Result{}, core.Errf(core.InternalError, "Cannot list your links").Because(err)
	}
	active, now := 0, time.Now()
	for _, l := range links {
		if l.State(now) == store.LinkActive {
			active++
		}
	}
	data.Links = linkCount{Active: active, Total: len(links)}
	return core.Result{Data: data, Message: fmt.Sprintf("%s of %d MB used, %d of %d files and folders, %d open lock(s)",
		core.HumanMB(used.Bytes), s.Config().QuotaPerUserMB, used.Files, limit.Files, len(locks))}, nil
}

// maxStatLocks bounds the locks shed_stats lists (the count is always exact).
const maxStatLocks = 50

// lockLines renders the caller's open locked edits: zone, path, age, and whether this
// conversation holds it (only that conversation can save it).
func lockLines(locks []store.Lock, convID string) lockList {
	items := make([]lockLine, 0, min(len(locks), maxStatLocks))
	for _, l := range locks[:min(len(locks), maxStatLocks)] {
		zone := "storage"
		switch {
		case strings.HasPrefix(l.ZoneKey, "group:"):
			zone = l.ZoneKey
		case strings.HasSuffix(l.ZoneKey, ":documents"):
			zone = "documents"
		}
		items = append(items, lockLine{Zone: zone, Path: l.Path, Since: l.Since.UTC().Format(time.RFC3339),
			ThisConversation: l.ConvID == convID})
	}
	return lockList{Count: len(locks), Items: items}
}
