package archive

import (
	"archive/zip"
	"cmp"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// Limits bound what an archive may expand to. Zero values are not "no limit": fill every
// field (core takes them from the archive valves).
type Limits struct {
	MaxEntries    int   // entries in the central directory, folders and skipped ones included
	MaxTotalBytes int64 // bytes of all files together, as decompressed
	MaxFileBytes  int64 // bytes of one file, as decompressed
	MaxRatio      int64 // decompressed / compressed, per entry and for the whole archive
	MaxDepth      int   // path components of an entry name
	MaxNameLength int   // bytes of an entry name
}

// RatioFloor is the size below which ratios are not judged: a small file of zeros
// compresses a thousand times and is no bomb.
const RatioFloor = 1 << 20

// Entry is one entry of the central directory as examined.
type Entry struct {
	Name       string // as stored (code page 437 names decoded)
	Path       string // clean relative path; "" when the name was refused
	Dir        bool
	Exec       bool // a file with an execute bit: extracted 0700 instead of 0600
	Size       uint64
	Compressed uint64
	Modified   time.Time
	Mode       fs.FileMode // as declared by the archive
	// Skip says why the entry is not extracted ("" = extracted): a symlink or special file,
	// a duplicate or case-colliding name, a name the caller excludes.
	Skip string
	f    *zip.File
}

// Archive is an opened zip whose entries have been examined.
type Archive struct {
	Entries []Entry
	Comment string
	// Declared is the sum of the declared sizes of the files Extract would write.
	Declared int64
	// Names is how many names (files and folders, those implied by paths included) the
	// entries claim: at most what Extract creates.
	Names int
	src   *countingReaderAt
	size  int64
	lim   Limits
}

// Exclude lets the caller skip entries by clean path: it returns the reason, or "".
type Exclude func(path string) string

// Open reads the central directory of the zip in r (size bytes) and examines every entry
// strictly: the first insecure name, limit crossed or unreadable entry is the error. What
// Open accepts, Extract can write (Extract still checks the bytes as they come).
func Open(r io.ReaderAt, size int64, lim Limits, exclude Exclude) (*Archive, error) {
	var first error
	a, err := examine(r, size, lim, exclude, func(err error) bool { first = err; return true })
	if err != nil {
		return nil, err
	}
	if first != nil {
		return nil, first
	}
	return a, nil
}

// Inspect is Open for listing (shed_zipinfo): every problem Open would refuse is returned
// as a warning instead, and the examination goes on. Only a file that is not a readable
// zip is an error.
func Inspect(r io.ReaderAt, size int64, lim Limits) (*Archive, []error, error) {
	var warnings []error
	a, err := examine(r, size, lim, nil, func(err error) bool { warnings = append(warnings, err); return false })
	return a, warnings, err
}

// examine parses the archive and examines its entries; each problem goes to problem,
// which returns true to stop.
func examine(r io.ReaderAt, size int64, lim Limits, exclude Exclude, problem func(error) bool) (*Archive, error) {
	if err := sniffAt(r, size); err != nil {
		return nil, err
	}
	// Past the entry limit the directory is not parsed at all, even for a listing.
	if err := countEntries(r, size, lim.MaxEntries); err != nil {
		problem(err)
		return &Archive{size: size, lim: lim}, nil
	}
	src := &countingReaderAt{r: r}
	zr, err := zip.NewReader(src, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, &FormatError{Reason: "the ZIP archive is truncated or corrupt (" + strings.TrimPrefix(err.Error(), "zip: ") + ")"}
	}
	a := &Archive{Comment: zr.Comment, src: src, size: size, lim: lim}
	if n := len(zr.File); n > lim.MaxEntries { // countEntries read another directory
		problem(&LimitError{Limit: "entries", Value: int64(n), Max: int64(lim.MaxEntries)})
		return a, nil
	}
	a.Entries = make([]Entry, 0, len(zr.File))
	names := map[string]seenName{}
	for _, f := range zr.File {
		e := Entry{Name: decodeName(f.Name, f.NonUTF8), Size: f.UncompressedSize64, Compressed: f.CompressedSize64,
			Modified: f.Modified, Mode: f.Mode(), f: f}
		e.Dir = e.Mode.IsDir() || strings.HasSuffix(e.Name, "/")
		e.Exec = !e.Dir && e.Mode&0o111 != 0
		if err := a.examineEntry(&e, names, exclude); err != nil && problem(err) {
			return a, nil
		}
		a.Entries = append(a.Entries, e)
	}
	a.Names = len(names)
	if err := a.checkOverlap(); err != nil && problem(err) {
		return a, nil
	}
	if err := a.checkDeclared(); err != nil {
		problem(err)
	}
	return a, nil
}

// seenName is a path already claimed by an earlier entry (or as one's parent folder).
type seenName struct {
	path string
	dir  bool
}

// examineEntry checks one entry's name, kind and method, and decides whether it is
// skipped. A returned error is a refusal of the whole archive.
func (a *Archive) examineEntry(e *Entry, names map[string]seenName, exclude Exclude) error {
	p, err := cleanName(e.Name, a.lim)
	if err != nil {
		return err
	}
	e.Path = p
	switch {
	case e.Mode&fs.ModeSymlink != 0:
		e.Skip = "symlink entries are not extracted"
		return nil
	case !e.Dir && !e.Mode.IsRegular():
		e.Skip = "special files (devices, pipes, sockets) are not extracted"
		return nil
	}
	if !e.Dir {
		if e.f.Flags&0x1 != 0 {
			return &FormatError{Entry: e.Name, Reason: "the entry is encrypted; encrypted archives are not supported"}
		}
		if e.f.Method != zip.Store && e.f.Method != zip.Deflate {
			return &FormatError{Entry: e.Name, Reason: "the entry uses an unsupported compression method (only stored and deflate)"}
		}
	}
	// Why: deflate never grows data by more than a few bytes per block, so compressed data
	// far larger than the declared size is a header lying low, the first move of a bomb.
	if !e.Dir && e.Compressed > e.Size+e.Size/64+1024 {
		return &LimitError{Limit: "size_mismatch", Entry: e.Name, Value: int64(min(e.Compressed, 1<<62)), Max: int64(e.Size)}
	}
	if exclude != nil {
		if e.Skip = exclude(p); e.Skip != "" {
			return nil
		}
	}
	e.Skip = claim(names, p, e.Dir)
	return nil
}

// claim records p (and its parent folders) as taken, or says why p collides with an
// earlier entry: the same name, the same name in another case, or a file where a folder is
// needed (or the reverse). The first entry wins, so the outcome never depends on the file
// system's case sensitivity.
func claim(names map[string]seenName, p string, dir bool) string {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		prefix := strings.Join(parts[:i], "/")
		key := strings.ToLower(prefix)
		switch s, ok := names[key]; {
		case !ok:
			names[key] = seenName{path: prefix, dir: true}
		case !s.dir:
			return "its folder " + prefix + " is a file earlier in the archive"
		case s.path != prefix:
			return "its folder " + prefix + " differs only in case from " + s.path
		}
	}
	key := strings.ToLower(p)
	s, ok := names[key]
	switch {
	case !ok:
		names[key] = seenName{path: p, dir: dir}
		return ""
	case s.path != p:
		return "the name differs only in case from " + s.path + ", extracted first"
	case s.dir && dir:
		return "" // a folder named twice (or after its content): harmless
	case s.dir:
		return "a folder of that name is earlier in the archive"
	}
	return "duplicate of an earlier entry, extracted first"
}

// extracted reports whether Extract writes e as a file.
func (e *Entry) extracted() bool { return e.Path != "" && e.Skip == "" && !e.Dir }

// checkDeclared refuses an archive whose headers already claim too much. (The headers may
// lie low: Extract checks the real bytes.)
func (a *Archive) checkDeclared() error {
	var total uint64
	for i := range a.Entries {
		if e := &a.Entries[i]; e.extracted() {
			total += e.Size
			if e.Size > RatioFloor && e.Size/max(e.Compressed, 1) > uint64(a.lim.MaxRatio) {
				return &LimitError{Limit: "ratio", Entry: e.Name, Value: int64(min(e.Size/max(e.Compressed, 1), 1<<62)), Max: a.lim.MaxRatio}
			}
			if total > uint64(a.lim.MaxTotalBytes) {
				return &LimitError{Limit: "total_bytes", Value: a.lim.MaxTotalBytes, Max: a.lim.MaxTotalBytes}
			}
			if e.Size > uint64(a.lim.MaxFileBytes) {
				return &LimitError{Limit: "file_bytes", Entry: e.Name, Value: int64(min(e.Size, 1<<62)), Max: a.lim.MaxFileBytes}
			}
		}
	}
	a.Declared = int64(total)
	if total > RatioFloor && total/uint64(max(a.size, 1)) > uint64(a.lim.MaxRatio) {
		return &LimitError{Limit: "overall_ratio", Value: int64(total / uint64(max(a.size, 1))), Max: a.lim.MaxRatio}
	}
	return nil
}

// checkOverlap refuses entries whose compressed data overlap (the Fifield bomb: many
// central-directory entries expanding the same few kilobytes) or lie past the end.
func (a *Archive) checkOverlap() error {
	type span struct {
		off, end int64
		name     string
	}
	spans := make([]span, 0, len(a.Entries))
	for i := range a.Entries {
		e := &a.Entries[i]
		if !e.extracted() || e.Compressed == 0 {
			continue
		}
		off, err := e.f.DataOffset()
		if err != nil {
			return &FormatError{Entry: e.Name, Reason: "the entry's local header is unreadable (truncated or corrupt archive)"}
		}
		end := off + int64(min(e.Compressed, 1<<62))
		if end > a.size || end < off {
			return &FormatError{Entry: e.Name, Reason: "the entry's data runs past the end of the file (truncated archive)"}
		}
		spans = append(spans, span{off, end, e.Name})
	}
	slices.SortFunc(spans, func(x, y span) int { return cmp.Compare(x.off, y.off) })
	for i := 1; i < len(spans); i++ {
		if spans[i].off < spans[i-1].end {
			return &LimitError{Limit: "overlap", Entry: spans[i].name}
		}
	}
	return nil
}
