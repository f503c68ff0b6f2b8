package archives

import (
	"context"
	"fmt"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/archive"
)

// ZipinfoInput is the input of shed_zipinfo.
type ZipinfoInput struct {
	core.ZoneArgs
	Path string `json:"path" required:"true" doc:"ZIP file, relative to the zone"`
}

// zipinfo bounds: entries listed (the original's 100), warnings listed, comment bytes.
const (
	zipinfoEntries  = 100
	zipinfoWarnings = 50
	zipinfoComment  = 1000
)

// zipEntry is one line of shed_zipinfo's listing.
type zipEntry struct {
	Name       string `json:"name"`
	Size       uint64 `json:"size"`
	Compressed uint64 `json:"compressed"`
	Ratio      string `json:"ratio"`
	Modified   string `json:"modified"`
	IsDir      bool   `json:"is_dir"`
	Mode       string `json:"mode"`
}

// Zipinfo lists a ZIP archive of any zone (reference §5.22) without extracting it: the
// first entries, the totals, the comment, and a warnings list of everything shed_unzip
// would refuse or skip (unsafe names, bombs, symlinks, duplicates), so a model can decide.
func (s *Tools) Zipinfo(ctx context.Context, c core.Caller, in ZipinfoInput) (core.Result, error) {
	o, err := s.OpenRead(ctx, c, in.ZoneArgs, in.Path, notAFileDir)
	if err != nil {
		return core.Result{}, err
	}
	defer o.Close()
	a, problems, err := archive.Inspect(o.F, o.Info.Size(), s.archiveLimits())
	if err != nil {
		return core.Result{}, archiveError(err, o.Z, o.Rel, o.Z)
	}
	var warnings []string
	for _, p := range problems {
		warnings = append(warnings, p.Error())
	}
	entries := make([]zipEntry, 0, min(len(a.Entries), zipinfoEntries))
	var size, compressed uint64
	for i := range a.Entries {
		e := &a.Entries[i]
		size += e.Size
		compressed += e.Compressed
		if e.Skip != "" {
			warnings = append(warnings, fmt.Sprintf("entry %q would be skipped: %s", e.Name, e.Skip))
		}
		if len(entries) < zipinfoEntries {
			entries = append(entries, zipEntry{Name: e.Name, Size: e.Size, Compressed: e.Compressed,
				Ratio: saved(e.Size, e.Compressed), Modified: e.Modified.Format("2006-01-02 15:04"), IsDir: e.Dir,
				Mode: e.Mode.String()})
		}
	}
	comment := a.Comment
	if len(comment) > zipinfoComment {
		comment = comment[:zipinfoComment] + "..."
	}
	data := zipInfo{Comment: comment, CompressedSize: compressed, CompressionRatio: saved(size, compressed), Files: entries,
		FilesCount: len(a.Entries), Path: o.Rel, TotalSize: size, TotalSizeHuman: core.HumanSize(int64(min(size, 1<<62))),
		Truncated: len(a.Entries) > len(entries), Warnings: warnings[:min(len(warnings), zipinfoWarnings)], WarningsCount: len(warnings)}
	if warnings == nil {
		data.Warnings = []string{}
	}
	msg := fmt.Sprintf("ZIP contains %d files (%s compression)", len(a.Entries), saved(size, compressed))
	if len(warnings) > 0 {
		msg += fmt.Sprintf("; %d warnings: unzip would refuse or skip entries (see data.warnings)", len(warnings))
	}
	return core.Result{Data: data, Message: msg}, nil
}

// zipInfo is the answer of shed_zipinfo (fields in the order of the JSON keys,
// alphabetical, as the map it replaces wrote them).
type zipInfo struct {
	Comment          string     `json:"comment"`
	CompressedSize   uint64     `json:"compressed_size"`
	CompressionRatio string     `json:"compression_ratio"`
	Files            []zipEntry `json:"files"`
	FilesCount       int        `json:"files_count"`
	Path             string     `json:"path"`
	TotalSize        uint64     `json:"total_size"`
	TotalSizeHuman   string     `json:"total_size_human"`
	Truncated        bool       `json:"truncated"`
	Warnings         []string   `json:"warnings"`
	WarningsCount    int        `json:"warnings_count"`
}

// saved is the original's ratio: the share of the size saved by compression ("0%" when empty).
func saved(size, compressed uint64) string {
	if size == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.1f%%", (1-float64(compressed)/float64(size))*100)
}
