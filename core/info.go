package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// Parameters answers shed_parameters: the valves a model may need to plan its work. The
// storage path is deliberately not disclosed (the original exposed the host path).
func (s *Service) Parameters(_ context.Context, _ Caller) (Result, error) {
	v := s.cfg
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
			"groups_available":       s.owui != nil && v.Auth.Mode == "session" || len(v.Groups.Static) > 0 || v.Auth.Mode == "headers",
		},
	}
	return Result{Data: data, Message: "Current valve configuration"}, nil
}

// zoneUsage is one line of shed_stats: bytes of the regular files, and names (files,
// folders, links: what the file quota counts).
type zoneUsage struct {
	SizeBytes int64  `json:"size_bytes"`
	SizeHuman string `json:"size_human"`
	Files     int64  `json:"files"`
	// Unmeasured are the first folders or files the walk could not read (path: cause);
	// what they hold is not counted.
	Unmeasured []string `json:"unmeasured,omitempty"`
}

// Stats answers shed_stats: size and files of each personal zone (measured), and the quota
// usage as accounted in the state database (what writes are checked against).
func (s *Service) Stats(ctx context.Context, c Caller) (Result, error) {
	user := filepath.Join(s.base, "users", c.UserID)
	data := map[string]any{}
	for label, dir := range map[string]string{
		"uploads":   filepath.Join(user, "Uploads"),
		"storage":   filepath.Join(user, "Storage", "data"),
		"documents": filepath.Join(user, "Documents", "data"),
	} {
		u, err := s.dirUsage(ctx, store.Owner{Kind: "user", ID: c.UserID}, dir)
		if err != nil {
			return Result{}, Errf(InternalError, "Cannot measure the %s zone", label).Because(err)
		}
		data[label] = u
	}
	used, limit, err := s.usageOf(ctx, store.Owner{Kind: "user", ID: c.UserID})
	if err != nil {
		return Result{}, err
	}
	total := usageLine(used, limit)
	total["size_bytes"], total["size_human"], total["quota_mb"] = used.Bytes, humanMB(used.Bytes), s.cfg.QuotaPerUserMB
	data["total"] = total
	// Group spaces have quotas of their own: one line per group the caller belongs to.
	if groups, available, err := s.memberships(ctx, c); available && err == nil {
		lines := []map[string]any{}
		for _, g := range groups {
			if !ValidID(g.ID) {
				continue
			}
			used, limit, err := s.usageOf(ctx, store.Owner{Kind: "group", ID: g.ID})
			if err != nil {
				return Result{}, err
			}
			line := usageLine(used, limit)
			line["group"], line["id"] = g.Name, g.ID
			lines = append(lines, line)
		}
		data["groups"] = lines
	}
	for _, label := range []string{"uploads", "storage", "documents"} {
		u := data[label].(zoneUsage)
		line := map[string]any{"size_bytes": u.SizeBytes, "size_human": u.SizeHuman, "files": u.Files,
			"percent_of_quota": percent(u.SizeBytes, limit.Bytes)}
		if len(u.Unmeasured) > 0 {
			line["unmeasured"] = u.Unmeasured
		}
		data[label] = line
	}
	locks, err := s.db.LocksByUser(ctx, c.UserID)
	if err != nil {
		return Result{}, Errf(InternalError, "Cannot list your locks").Because(err)
	}
	data["locks"] = lockLines(locks, c.ConvID)
	links, err := s.db.LinksOf(ctx, c.UserID)
	if err != nil {
		return Result{}, Errf(InternalError, "Cannot list your links").Because(err)
	}
	active, now := 0, time.Now()
	for _, l := range links {
		if l.State(now) == store.LinkActive {
			active++
		}
	}
	data["links"] = map[string]any{"active": active, "total": len(links)}
	return Result{Data: data, Message: fmt.Sprintf("%s of %d MB used, %d of %d files and folders, %d open lock(s)",
		humanMB(used.Bytes), s.cfg.QuotaPerUserMB, used.Files, limit.Files, len(locks))}, nil
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

// usageOf is an owner's accounted usage and quota.
func (s *Service) usageOf(ctx context.Context, o store.Owner) (used, limit amount, err error) {
	if err := s.ensureUsage(ctx, o); err != nil {
		return amount{}, amount{}, quotaErr("Cannot read the quota", err)
	}
	if used, err = s.db.Usage(ctx, o); err != nil {
		return amount{}, amount{}, quotaErr("Cannot read the quota", err)
	}
	return used, s.limit(o), nil
}

// usageLine renders used/limit as shed_stats shows them.
func usageLine(used, limit amount) map[string]any {
	return map[string]any{"used_bytes": used.Bytes, "limit_bytes": limit.Bytes, "usage_percent": percent(used.Bytes, limit.Bytes),
		"files_used": used.Files, "files_limit": limit.Files}
}

// percent renders part/whole as "12.5%" (0% for an unlimited whole).
func percent(part, whole int64) string {
	pct := 0.0
	if whole > 0 {
		pct = float64(part) * 100 / float64(whole)
	}
	return fmt.Sprintf("%.1f%%", pct)
}

// dirUsage is walkUsage of one of o's directories, counting an encrypted file by its
// plaintext size (the unit of the quota) in a user's Storage and Uploads. The folders
// directly in Uploads are the conversations' zone roots, made by the server: not counted.
func (s *Service) dirUsage(ctx context.Context, o store.Owner, dir string) (zoneUsage, error) {
	user := filepath.Join(s.base, "users", o.ID)
	sealed := o.Kind == "user" && dir != filepath.Join(user, "Documents", "data") && s.userKey(ctx, o.ID).state != ""
	return walkUsage(ctx, dir, sealed, o.Kind == "user" && dir == filepath.Join(user, "Uploads"))
}

// walkUsage sums regular files and counts names under dir without following symlinks
// (walk.go: relative traversal, so a tree deeper than PATH_MAX is measured too); a missing
// dir is empty. With sealed, an encrypted file counts its plaintext size; with roots, the
// folders directly in dir are zone roots, not counted. A folder it cannot read is listed in
// Unmeasured and the walk goes on: what it holds is not counted.
func walkUsage(ctx context.Context, dir string, sealed, roots bool) (zoneUsage, error) {
	var u zoneUsage
	var problems walkProblems
	w := treeWalk{
		visit: func(dirfd int, rel string, e walkEnt) (bool, error) {
			if e.typ.IsRegular() {
				var st unix.Stat_t
				if err := unix.Fstatat(dirfd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					if !errors.Is(err, unix.ENOENT) {
						problems.add(rel, err)
					}
					return false, nil
				}
				size := st.Size
				if sealed {
					size = plainSizeAt(dirfd, e.name, size)
				}
				u.SizeBytes += size
			}
			if !roots || rel != e.name || e.typ&fs.ModeDir == 0 {
				u.Files++
			}
			return e.typ&fs.ModeDir != 0, nil
		},
		problem: problems.add,
	}
	err := w.run(ctx, dir)
	u.SizeHuman, u.Unmeasured = humanMB(u.SizeBytes), problems.first
	return u, err
}

// plainSizeAt is the plaintext size of the file name in the folder open as dirfd, whose
// size is size: its own when it is not encrypted. It never follows a symlink nor blocks
// on a FIFO.
func plainSizeAt(dirfd int, name string, size int64) int64 {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return size
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	plain, _ := confine.SealedSize(f, size)
	return plain
}

func humanMB(n int64) string { return fmt.Sprintf("%.2f MB", float64(n)/(1<<20)) }
