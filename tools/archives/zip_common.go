package archives

import (
	"context"
	"errors"
	"io"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/fileshed/fileshed/core"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/archive"
)

// archiveLimits are the archive valves as the archive leaf takes them.
func (s *Tools) archiveLimits() archive.Limits {
	a := s.Config().Archive
	return archive.Limits{MaxEntries: a.MaxEntries, MaxTotalBytes: int64(a.MaxTotalMB) << 20,
		MaxFileBytes: int64(s.Config().MaxFileSizeMB) << 20, MaxRatio: int64(a.MaxRatio), MaxDepth: a.MaxDepth,
		MaxNameLength: a.MaxNameLength}
}

// archiveZone resolves the zone of shed_zip and shed_unzip: storage, documents or group;
// Uploads is ZONE_FORBIDDEN (the original's code), not ZONE_READONLY.
func (s *Tools) archiveZone(ctx context.Context, c core.Caller, za core.ZoneArgs, tool string) (*core.Zone, error) {
	if strings.EqualFold(strings.TrimSpace(za.Zone), "uploads") {
		return nil, core.Errf(core.ZoneForbidden, "Zone 'uploads' not allowed for %s", tool).With("zone", za.Zone).
			WithHint("Use zone='storage', 'documents' or 'group'; an upload can be the source: shed_archive(action='unzip', zone='storage', src_zone='uploads', src=...)")
	}
	return s.ResolveZone(ctx, c, za.Zone, za.Group, true)
}

// notAFileDir is the openRead answer for a folder given where a ZIP file is expected.
func notAFileDir(z *core.Zone, shown string) error {
	return core.Errf(core.NotAFile, "Path is a directory, not a ZIP file: %s", shown).With("path", shown).With("zone", z.Label).
		WithHint("Give the path of a .zip file (see shed_tree); to compress a folder use shed_archive(action='zip')")
}

// limitValves names the valve behind each archive limit.
var limitValves = map[string]string{"entries": "archive.max_entries", "total_bytes": "archive.max_total_mb",
	"ratio": "archive.max_ratio", "overall_ratio": "archive.max_ratio", "depth": "archive.max_depth",
	"name_length": "archive.max_name_length", "file_bytes": "max_file_size_mb"}

// archiveError translates the archive leaf's errors for the ZIP file shown in zone z;
// *Error passes through; anything else is a file system error of the destination zone dz.
func archiveError(err error, z *core.Zone, shown string, dz *core.Zone) error {
	var le *archive.LimitError
	var ne *archive.NameError
	var fe *archive.FormatError
	if e, ok := core.AsError(err); ok {
		return e
	}
	switch {
	case errors.As(err, &le) && le.Limit == "file_bytes":
		return core.Errf(core.FileTooLarge, "ZIP entry %s would be %d bytes, over the %d bytes limit", core.Shorten(le.Entry), le.Value, le.Max).
			With("file", shown).With("entry", core.Shorten(le.Entry)).With("size", le.Value).With("limit", le.Max).
			WithHint("Extract it with shed_exec unzip if it must be, or ask an administrator to raise max_file_size_mb")
	case errors.As(err, &le):
		e := core.Errf(core.ZipBomb, "ZIP refused (possible decompression bomb): %s", le.Error()).With("file", shown).
			With("limit", le.Limit).With("value", le.Value).With("max", le.Max)
		if le.Entry != "" {
			e.With("entry", core.Shorten(le.Entry))
		}
		if v, ok := limitValves[le.Limit]; ok {
			e.With("valve", v).WithHint("Nothing was extracted. Inspect the archive with shed_archive(action='info'); the limit is the valve %s (see shed_info(action='parameters'))", v)
		} else {
			e.WithHint("Nothing was extracted. The archive is crafted or corrupt: inspect it with shed_archive(action='info') and do not extract it")
		}
		return e
	case errors.As(err, &ne):
		code, msg := core.InvalidPath, "ZIP contains an invalid entry name"
		if ne.Escape {
			code, msg = core.PathEscape, "ZIP contains a path traversal"
		}
		return core.Errf(code, "%s: %s", msg, ne.Error()).With("file", shown).With("entry", core.Shorten(ne.Entry)).With("reason", ne.Reason).
			WithHint("Nothing was extracted: the ZIP file may be malicious. List its entries with shed_archive(action='info')")
	case errors.As(err, &fe):
		e := core.Errf(core.InvalidFormat, "%s: %s", shown, fe.Error()).With("file", shown).With("zone", z.Label)
		if fe.Kind != "" {
			e.With("detected", fe.Kind)
		}
		if fe.Entry != "" {
			e.With("entry", core.Shorten(fe.Entry))
		}
		return e.WithHint("%s", formatHint(fe.Kind, shown))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return core.Errf(core.InternalError, "Extraction interrupted").With("file", shown).Because(err).
			WithHint("Nothing was extracted; call again")
	}
	return core.WriteError(err, dz, shown)
}

// formatHint names the next step for a file that is not a readable ZIP.
func formatHint(kind, shown string) string {
	switch kind {
	case "gzip":
		return "It is gzip-compressed (a .tar.gz?): extract it with shed_exec tar -xzf " + shown + ", or gunzip it"
	case "tar":
		return "It is a tar archive: extract it with shed_exec tar -xf " + shown
	case "bzip2", "xz", "zstd":
		return "It is " + kind + "-compressed: extract it with shed_exec tar -xf " + shown
	case "7z", "rar":
		return "It is a " + kind + " archive, which unzip cannot read: ask for a .zip"
	case "empty":
		return "The file is empty: upload or create the archive again"
	}
	return "Check the file with shed_file_type; a truncated upload must be sent again"
}

// unzipExclude skips the entries shed_unzip never writes into z: its protected paths
// (protected.go: fileshed's temporary names, which the start-up sweep would delete, and in
// versioned zones anything inside a .git folder, the classic way to run code through git).
func unzipExclude(z *core.Zone) archive.Exclude {
	return func(p string) string { return core.ProtectedReason(z, p) }
}

// stagingDest is the archive.Dest of shed_unzip: a staging folder inside the zone, written
// through the zone's confinement. Files are created new (O_EXCL), 0600 or 0700. Each file
// is synced and closed in the background (at most syncAhead at once) while the next one is
// decompressed; wait returns once all are durable, with the first failure.
type stagingDest struct {
	fs  *core.TxFs
	dir string
	// made are the folders made so far; names counts them and the files created (what the
	// extraction adds to the zone, for the file quota).
	made  map[string]bool
	names int64
	sem   chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	fail  error
}

// syncAhead is how many extracted files may be syncing at once.
const syncAhead = 8

func newStagingDest(fs *core.TxFs, dir string) *stagingDest {
	return &stagingDest{fs: fs, dir: dir, made: map[string]bool{}, sem: make(chan struct{}, syncAhead)}
}

// MkdirAll creates a folder of the staging area and its missing parents, 0700, counting
// those it made.
func (d *stagingDest) MkdirAll(dir string) error {
	var missing []string
	for p := dir; p != "." && p != "" && !d.made[p]; p = path.Dir(p) {
		missing = append(missing, p)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		switch err := d.fs.Mkdir(path.Join(d.dir, missing[i]), 0o700); {
		case err == nil:
			d.names++
		case !errors.Is(err, os.ErrExist):
			return err
		}
		d.made[missing[i]] = true
	}
	return nil
}

// Create creates a new file of the staging area: 0600, or 0700 when exec.
func (d *stagingDest) Create(name string, exec bool) (io.WriteCloser, error) {
	perm := os.FileMode(0o600)
	if exec {
		perm = 0o700
	}
	f, err := d.fs.OpenFile(path.Join(d.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, err
	}
	d.names++
	return syncedFile{File: f, d: d}, nil
}

// wait waits for the background syncs and returns the first failure.
func (d *stagingDest) wait() error {
	d.wg.Wait()
	return d.fail
}

// syncedFile hands its sync and close to the background when closed.
type syncedFile struct {
	afero.File
	d *stagingDest
}

// Close queues the sync and close of the file (waiting while syncAhead are in flight).
func (f syncedFile) Close() error {
	d := f.d
	d.sem <- struct{}{}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		err := f.Sync()
		if cerr := f.File.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			d.mu.Lock()
			if d.fail == nil {
				d.fail = err
			}
			d.mu.Unlock()
		}
		<-d.sem
	}()
	return nil
}
