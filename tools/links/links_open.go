package links

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// The download route's two refusals. Neither says more: a stranger must not learn what
// exists (DESIGN §6).
var (
	// ErrLinkUnknown is a malformed, tampered or foreign token, or a path that is not there
	// (the route answers 404).
	ErrLinkUnknown = errors.New("link: unknown")
	// ErrLinkGone is a link that is expired, revoked or used up, whose file was replaced,
	// deleted or swapped for a symlink, or whose creator left the group (410). The errors
	// OpenLink returns for it are *GoneError, which say which.
	ErrLinkGone = errors.New("link: gone")
)

// LinkTarget is what a download request reached: a regular file (File, Info) or a folder
// (Dir, the linked folder, and Sub, the clean path below it being shown). Close it.
type LinkTarget struct {
	Link store.Link
	// Name is the base name of what is served (the zone's name for a zone root).
	Name string
	Sub  string
	File afero.File
	Info os.FileInfo
	Dir  core.ReadFs
	zone *core.Zone
	// closeDir releases Dir (nil: no folder).
	closeDir func()
}

// Close releases the file, the folder and the zone.
func (t *LinkTarget) Close() {
	if t.File != nil {
		_ = t.File.Close()
	}
	if t.closeDir != nil {
		t.closeDir()
	}
	t.zone.Close()
}

// OpenLink verifies token and opens what it points to, sub being a path below a folder
// link ("" for the link itself), by the rule of openStored. Opening does not count a
// download: UseLink does.
func (s *Tools) OpenLink(ctx context.Context, token, sub string) (*LinkTarget, error) {
	id, err := s.signer.Verify(token)
	if err != nil {
		return nil, ErrLinkUnknown
	}
	l, err := s.State().LinkByID(ctx, id)
	switch {
	case errors.Is(err, store.ErrNoLink):
		return nil, ErrLinkUnknown
	case err != nil:
		return nil, err
	}
	return s.openStored(ctx, l, sub)
}

// openStored is the one rule a stored link is judged by, for the download route and for
// shed_link list alike (a list that said "active" while downloads answered 410 was the
// finding of issue 28): a link that is not active (expired, revoked, used up), whose
// creator a group no longer counts as a member, or whose file was replaced, deleted or
// swapped for a symlink since its creation is a *GoneError. The file is re-resolved
// through the zone's confinement and compared with its identity at creation on the open
// descriptor, so a download never serves other bytes.
func (s *Tools) openStored(ctx context.Context, l store.Link, sub string) (*LinkTarget, error) {
	if st := l.State(time.Now()); st != store.LinkActive {
		return nil, gone(st)
	}
	z, err := s.linkZone(ctx, l)
	if err != nil {
		return nil, err
	}
	t := &LinkTarget{Link: l, zone: z, Name: path.Base("/" + l.Path)}
	if l.Path == "" {
		t.Name = z.Name
	}
	if err := s.openTarget(t, sub); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// openTarget opens the linked file, or the linked folder and sub below it.
func (s *Tools) openTarget(t *LinkTarget, sub string) error {
	l := t.Link
	if !l.IsDir {
		if sub != "" {
			return ErrLinkUnknown
		}
		// A symlink inside the zone is followed here as it was at creation: the identity
		// check below is what refuses a swapped file, and the zone's root refuses a
		// symlink that leaves the zone.
		f, info, err := openNoBlock(t.zone.Fs(), l.Path, true)
		if err != nil {
			return gone(LinkChanged)
		}
		t.File, t.Info = f, info
		if !info.Mode().IsRegular() || identity(info) != l.Identity {
			return gone(LinkChanged)
		}
		return nil
	}
	dir, closeDir, err := t.zone.Fs().Sub(l.Path)
	if err != nil {
		return gone(LinkChanged)
	}
	t.Dir, t.closeDir = dir, closeDir
	if info, err := dir.Stat(""); err != nil || identity(info) != l.Identity {
		return gone(LinkChanged)
	}
	rel, err := confine.Clean(sub)
	if err != nil || core.ProtectedReason(t.zone, rel) != "" {
		return ErrLinkUnknown // a protected name below the folder is never served (WriteZip)
	}
	t.Sub = rel
	if rel == "" {
		return nil
	}
	t.Name = path.Base(rel)
	// Why Lstat first: entries reached through a folder link are never symlinks (the
	// listing and the zip skip them too); the open below refuses a final symlink as well.
	fi, _, err := dir.LstatIfPossible(rel)
	switch {
	case err != nil || fi.Mode()&fs.ModeSymlink != 0:
		return ErrLinkUnknown
	case fi.IsDir():
		return nil
	}
	f, info, err := openNoBlock(dir, rel, false)
	if err != nil {
		return ErrLinkUnknown
	}
	t.File, t.Info = f, info
	if !info.Mode().IsRegular() {
		return ErrLinkUnknown
	}
	return nil
}

// openNoBlock opens name for reading without blocking on a FIFO (and without following a
// final symlink unless follow), and describes the open descriptor.
func openNoBlock(fsys core.ReadFs, name string, follow bool) (afero.File, os.FileInfo, error) {
	f, err := fsys.OpenNoBlock(name, follow)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// UseLink counts one download of the link (one atomic UPDATE): ErrLinkGone when it has
// expired, been revoked or used up meanwhile.
func (s *Tools) UseLink(ctx context.Context, l store.Link) error {
	err := s.State().UseLink(ctx, l.ID, time.Now())
	switch {
	case errors.Is(err, store.ErrLinkGone), errors.Is(err, store.ErrNoLink):
		now := time.Now()
		if l, err := s.State().LinkByID(ctx, l.ID); err == nil && l.State(now) != store.LinkActive {
			return gone(l.State(now))
		}
		return gone(store.LinkExhausted)
	}
	return err
}

// linkZone opens the zone of a stored link as its creator. A group link first asks whether
// its creator still counts as a member (core.MemberStateOf: a source that lists the
// members, groups.static or Open WebUI with openwebui.admin_api_key; else the requests
// the server has seen): one not listed, or seen without the group since, is
// LinkCreatorLeft. Where nothing is known (never seen, or links older than the record) the
// link is served until it expires: README "Download links" says so.
func (s *Tools) linkZone(ctx context.Context, l store.Link) (*core.Zone, error) {
	c, err := core.NewCaller(l.Owner, "", "", "", l.ConvID, nil, "")
	if err != nil {
		return nil, gone(LinkUnavailable)
	}
	if l.GroupID != "" {
		st, err := s.MemberStateOf(ctx, s.KnownGroup(l.GroupID), l.Owner)
		if err != nil {
			return nil, err
		}
		if st.Gone() {
			return nil, gone(LinkCreatorLeft)
		}
		c = c.VouchedIn(l.GroupID)
	}
	z, err := s.ResolveZone(ctx, c, l.Zone, l.GroupID, false)
	if err != nil {
		return nil, gone(LinkUnavailable)
	}
	return z, nil
}

// LinkEntry is one row of a folder link's listing.
type LinkEntry struct {
	Name     string
	IsDir    bool
	Size     int64
	Modified time.Time
}

// maxListing bounds a folder page; the zip still holds everything.
const maxListing = 5000

// Entries lists the folder being shown (folders first, then by name), without symlinks,
// special files and protected names; more reports that the listing was cut at maxListing.
func (t *LinkTarget) Entries() (entries []LinkEntry, more bool, err error) {
	f, err := t.Dir.Open(t.Sub)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	infos, err := f.Readdir(-1) // lstat: symlinks are reported as such, never followed
	if err != nil {
		return nil, false, err
	}
	for _, fi := range infos {
		// Names the confinement would refuse or spell differently (control characters,
		// not NFC) could not be opened through the link: they are not listed either.
		if c, err := confine.Clean(fi.Name()); err != nil || c != fi.Name() || (!fi.IsDir() && !fi.Mode().IsRegular()) {
			continue
		}
		if core.ProtectedReason(t.zone, fi.Name()) != "" {
			continue // never shipped (WriteZip), so never listed nor served
		}
		entries = append(entries, LinkEntry{Name: fi.Name(), IsDir: fi.IsDir(), Size: fi.Size(), Modified: fi.ModTime()})
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].IsDir != entries[j].IsDir {
			return entries[i].IsDir
		}
		return entries[i].Name < entries[j].Name
	})
	if len(entries) > maxListing {
		return entries[:maxListing], true, nil
	}
	return entries, false, nil
}

// Content is the file's bytes for streaming: the *os.File itself when possible, so that
// the HTTP server can hand the transfer to the kernel (sendfile).
func (t *LinkTarget) Content() io.ReadSeeker {
	if f, ok := confine.OSFile(t.File); ok {
		return f
	}
	return t.File
}

// StreamTo copies the whole file to w when src is its content as an HTTP server copies it
// (the content from its start, limited to its size) and the file is encrypted: in whole
// segments rather than the server's 32 KiB reads. ok false leaves the copy to the caller
// (a plain file keeps the kernel's sendfile, a range its own copy).
func (t *LinkTarget) StreamTo(w io.Writer, src io.Reader) (n int64, ok bool, err error) {
	lr, isLimited := src.(*io.LimitedReader)
	if !isLimited || t.File == nil || !confine.IsSealedFile(t.File) || lr.R != io.Reader(t.File) || lr.N != t.Info.Size() {
		return 0, false, nil
	}
	n, err = t.File.(io.WriterTo).WriteTo(w)
	lr.N -= n
	return n, true, err
}

// AuditDownload records one answered download in the audit trail, as the link's creator
// (whose file it is) with the tool "link_download", the zone-relative path served and the
// HTTP status as the outcome.
func (s *Tools) AuditDownload(t *LinkTarget, status int) {
	s.Audit(core.Caller{UserID: t.Link.Owner, ConvID: "link:" + t.Link.ID[:min(8, len(t.Link.ID))]}, "link_download",
		t.Link.Zone, path.Join(t.Link.Path, t.Sub), strconv.Itoa(status))
}
