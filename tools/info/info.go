package info

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/store"
)

// Parameters answers shed_parameters: the valves a model may need to plan its work. The
// storage path is deliberately not disclosed (the original exposed the host path).
func (s *Tools) Parameters(_ context.Context, _ core.Caller) (core.Result, error) {
	v := s.Config()
	data := map[string]any{
		"quota_per_user_mb":        v.QuotaPerUserMB,
		"quota_per_group_mb":       v.QuotaPerGroupMB,
		"quota_files_per_user":     v.QuotaFilesPerUser,
		"quota_files_per_group":    v.QuotaFilesPerGroup,
		"max_file_size_mb":         v.MaxFileSizeMB,
		"lock_max_age_hours":       v.LockMaxAgeHours,
		"lock_force_after_minutes": v.LockForceAfterMinutes,
		"exec_timeout_default":     v.ExecTimeoutDefault,
		"exec_timeout_max":         v.ExecTimeoutMax,
		"group_default_mode":       v.GroupDefaultMode,
		"network_mode":             v.NetworkMode,
		"max_output_default":       v.MaxOutputDefault,
		"max_output_absolute":      v.MaxOutputAbsolute,
		"openwebui_api_url":        v.OpenWebUI.URL,
		"archive": map[string]any{"max_entries": v.Archive.MaxEntries, "max_total_mb": v.Archive.MaxTotalMB,
			"max_ratio": v.Archive.MaxRatio, "max_depth": v.Archive.MaxDepth, "max_name_length": v.Archive.MaxNameLength},
		"_info": map[string]any{
			"network_enabled":        v.NetworkMode != "disabled",
			"network_upload_allowed": v.NetworkMode == "all",
			"groups_available":       s.OpenWebUI() != nil && v.Auth.Mode == "session" || len(v.Groups.Static) > 0 || v.Auth.Mode == "headers",
		},
	}
	return core.Result{Data: data, Message: "Current valve configuration"}, nil
}

// Stats answers shed_stats: size and files of each personal zone (measured), and the quota
// usage as accounted in the state database (what writes are checked against).
func (s *Tools) Stats(ctx context.Context, c core.Caller) (core.Result, error) {
	user := filepath.Join(s.Base(), "users", c.UserID)
	data := map[string]any{}
	for label, dir := range map[string]string{
		"uploads":   filepath.Join(user, "Uploads"),
		"storage":   filepath.Join(user, "Storage", "data"),
		"documents": filepath.Join(user, "Documents", "data"),
	} {
		u, err := s.DirUsage(ctx, store.Owner{Kind: "user", ID: c.UserID}, dir)
		if err != nil {
			return core.Result{}, core.Errf(core.InternalError, "Cannot measure the %s zone", label).Because(err)
		}
		data[label] = u
	}
	used, limit, err := s.UsageOf(ctx, store.Owner{Kind: "user", ID: c.UserID})
	if err != nil {
		return core.Result{}, err
	}
	total := core.UsageLine(used, limit)
	total["size_bytes"], total["size_human"], total["quota_mb"] = used.Bytes, core.HumanMB(used.Bytes), s.Config().QuotaPerUserMB
	data["total"] = total
	// Group spaces have quotas of their own: one line per group the caller belongs to.
	if groups, available, err := s.Memberships(ctx, c); available && err == nil {
		lines := []map[string]any{}
		for _, g := range groups {
			if !core.ValidID(g.ID) {
				continue
			}
			used, limit, err := s.UsageOf(ctx, store.Owner{Kind: "group", ID: g.ID})
			if err != nil {
				return core.Result{}, err
			}
			line := core.UsageLine(used, limit)
			line["group"], line["id"] = g.Name, g.ID
			lines = append(lines, line)
		}
		data["groups"] = lines
	}
	for _, label := range []string{"uploads", "storage", "documents"} {
		u := data[label].(core.ZoneUsage)
		line := map[string]any{"size_bytes": u.SizeBytes, "size_human": u.SizeHuman, "files": u.Files,
			"percent_of_quota": core.Percent(u.SizeBytes, limit.Bytes)}
		if len(u.Unmeasured) > 0 {
			line["unmeasured"] = u.Unmeasured
		}
		data[label] = line
	}
	locks, err := s.DB().LocksByUser(ctx, c.UserID)
	if err != nil {
		return core.Result{}, core.Errf(core.InternalError, "Cannot list your locks").Because(err)
	}
	data["locks"] = lockLines(locks, c.ConvID)
	links, err := s.DB().LinksOf(ctx, c.UserID)
	if err != nil {
		return core.Result{}, core.Errf(core.InternalError, "Cannot list your links").Because(err)
	}
	active, now := 0, time.Now()
	for _, l := range links {
		if l.State(now) == store.LinkActive {
			active++
		}
	}
	data["links"] = map[string]any{"active": active, "total": len(links)}
	return core.Result{Data: data, Message: fmt.Sprintf("%s of %d MB used, %d of %d files and folders, %d open lock(s)",
		core.HumanMB(used.Bytes), s.Config().QuotaPerUserMB, used.Files, limit.Files, len(locks))}, nil
}

// maxStatLocks bounds the locks shed_stats lists (the count is always exact).
const maxStatLocks = 50

// lockLines renders the caller's open locked edits: zone, path, age, and whether this
// conversation holds it (only that conversation can save it).
func lockLines(locks []store.Lock, convID string) map[string]any {
	items := make([]map[string]any, 0, min(len(locks), maxStatLocks))
	for _, l := range locks[:min(len(locks), maxStatLocks)] {
		zone := "storage"
		switch {
		case strings.HasPrefix(l.ZoneKey, "group:"):
			zone = l.ZoneKey
		case strings.HasSuffix(l.ZoneKey, ":documents"):
			zone = "documents"
		}
		items = append(items, map[string]any{"zone": zone, "path": l.Path, "since": l.Since.UTC().Format(time.RFC3339),
			"this_conversation": l.ConvID == convID})
	}
	return map[string]any{"count": len(locks), "items": items}
}
