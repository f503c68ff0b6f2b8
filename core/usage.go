package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
	"golang.org/x/sys/unix"
)

// ZoneUsage is one line of shed_stats: bytes of the regular files, and names (files,
// folders, links: what the file quota counts).
type ZoneUsage struct {
	SizeBytes int64  `json:"size_bytes"`
	SizeHuman string `json:"size_human"`
	// Entries is the quota's unit: files and folders (and links, special files).
	Entries int64 `json:"entries"`
	// Files and Folders split Entries: what is not a folder, and the folders.
	Files   int64 `json:"files"`
	Folders int64 `json:"folders"`
	// Unmeasured are the first folders or files the walk could not read (path: cause);
	// what they hold is not counted.
	Unmeasured []string `json:"unmeasured,omitempty"`
}

// UsageOf is an owner's accounted usage and quota.
func (s *Service) UsageOf(ctx context.Context, o store.Owner) (used, limit Amount, err error) {
	if err := s.EnsureUsage(ctx, o); err != nil {
		return Amount{}, Amount{}, QuotaErr("Cannot read the quota", err)
	}
	if used, err = s.db.Usage(ctx, o); err != nil {
		return Amount{}, Amount{}, QuotaErr("Cannot read the quota", err)
	}
	return used, s.Limit(o), nil
}

// QuotaLine is an owner's usage against its quota as the tools show it (shed_group_info,
// shed_stats). Fields in JSON-name order: the answers are pinned byte for byte.
type QuotaLine struct {
	FilesLimit   int64  `json:"files_limit"`
	FilesUsed    int64  `json:"files_used"`
	LimitBytes   int64  `json:"limit_bytes"`
	UsagePercent string `json:"usage_percent"`
	UsedBytes    int64  `json:"used_bytes"`
}

// UsageLine renders used/limit as shed_stats shows them.
func UsageLine(used, limit Amount) QuotaLine {
	return QuotaLine{UsedBytes: used.Bytes, LimitBytes: limit.Bytes, UsagePercent: Percent(used.Bytes, limit.Bytes),
		FilesUsed: used.Files, FilesLimit: limit.Files}
}

// Percent renders part/whole as "12.5%" (0% for an unlimited whole).
func Percent(part, whole int64) string {
	pct := 0.0
	if whole > 0 {
		pct = float64(part) * 100 / float64(whole)
	}
	return fmt.Sprintf("%.1f%%", pct)
}

// DirUsage is walkUsage of one of o's directories, counting an encrypted file by its
// plaintext size (the unit of the quota) in a user's Storage and Uploads. The folders
// directly in Uploads are the conversations' zone roots, made by the server: not counted.
func (s *Service) DirUsage(ctx context.Context, o store.Owner, dir string) (ZoneUsage, error) {
	l := s.Layout()
	sealed := o.Kind == "user" && dir != l.ZoneRoot(o, Documents) && s.UserKey(ctx, o.ID).State != ""
	return walkUsage(ctx, dir, sealed, o.Kind == "user" && dir == l.ZoneRoot(o, Uploads))
}

// walkUsage sums regular files and counts names under dir without following symlinks
// (walk.go: relative traversal, so a tree deeper than PATH_MAX is measured too); a missing
// dir is empty. With sealed, an encrypted file counts its plaintext size; with roots, the
// folders directly in dir are zone roots, not counted. A folder it cannot read is listed in
// Unmeasured and the walk goes on: what it holds is not counted.
func walkUsage(ctx context.Context, dir string, sealed, roots bool) (ZoneUsage, error) {
	var u ZoneUsage
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
			switch dir := e.typ&fs.ModeDir != 0; {
			case !dir:
				u.Entries++
				u.Files++
			case !roots || rel != e.name:
				u.Entries++
				u.Folders++
			}
			return e.typ&fs.ModeDir != 0, nil
		},
		problem: problems.add,
	}
	err := w.run(ctx, dir)
	u.SizeHuman, u.Unmeasured = HumanMB(u.SizeBytes), problems.first
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

func HumanMB(n int64) string { return fmt.Sprintf("%.2f MB", float64(n)/(1<<20)) }
