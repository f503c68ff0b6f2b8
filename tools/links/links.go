package links

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/linktoken"
	"github.com/fileshed/fileshed/core/store"
)

// LinkCreateInput is the input of shed_link_create.
type LinkCreateInput struct {
	core.ZoneArgs
	Path         string `json:"path" required:"true" doc:"File or folder to share"`
	ExpiresHours int64  `json:"expires_hours,omitempty" minimum:"0" doc:"Hours until expiry (omit = server default)"`
	MaxDownloads int64  `json:"max_downloads,omitempty" minimum:"0" doc:"Downloads allowed (0 = unlimited)"`
}

// LinkListInput is the input of shed_link_list (none).
type LinkListInput struct{}

// LinkDeleteInput is the input of shed_link_delete; file_id is the original's name.
type LinkDeleteInput struct {
	LinkID string `json:"link_id,omitempty" doc:"From create or list"`
	FileID string `json:"file_id,omitempty"`
}

// linkSigner opens the key that signs link tokens: links.secret; else, with state.driver
// postgres, the key in the state database, which every replica reads (the first to start
// stores its own); else the key file in the storage directory (created on first start).
func linkSigner(k core.Kernel) (*linktoken.Signer, error) {
	cfg := k.Config()
	if cfg.Links.Secret == "" && cfg.State.Driver == store.Postgres {
		key, err := k.State().SharedKey(context.Background(), "links", linktoken.NewKey())
		if err != nil {
			return nil, fmt.Errorf("links key: %w", err)
		}
		return linktoken.New(key)
	}
	key, err := linktoken.LoadKey(cfg.Links.Secret, k.Layout().LinksKey())
	if err != nil {
		return nil, err
	}
	return linktoken.New(key)
}

// LinkCreate answers shed_link_create: a signed, expiring link to a file or folder of any
// zone. In links.mode openwebui the file is uploaded into the caller's Open WebUI files
// instead (the original's behaviour).
func (s *Tools) LinkCreate(ctx context.Context, c core.Caller, in LinkCreateInput) (core.Result, error) {
	return s.NewLink(ctx, c, in, false)
}

// NewLink is LinkCreate; page marks the link of a result page (shed_save_page), the only
// kind ?view renders. Why not every link to an .html or .md file: a download link shared for
// a file would otherwise become, with two words added, a page shown inline on fileshed's
// origin, made of whatever the file holds (a fake sign-in form, a forged notice).
func (s *Tools) NewLink(ctx context.Context, c core.Caller, in LinkCreateInput, page bool) (core.Result, error) {
	ttl := in.ExpiresHours
	if ttl == 0 {
		ttl = int64(s.Config().LinkTTLHoursDefault)
	}
	if ttl < 0 || ttl > int64(s.Config().LinkTTLHoursMax) {
		return core.Result{}, core.Errf(core.InvalidParameter, "expires_hours must be between 1 and %d", s.Config().LinkTTLHoursMax).
			With("expires_hours", in.ExpiresHours).With("max", s.Config().LinkTTLHoursMax).
			WithHint("Use expires_hours from 1 to %d, or omit it for %d", s.Config().LinkTTLHoursMax, s.Config().LinkTTLHoursDefault)
	}
	if in.MaxDownloads < 0 {
		return core.Result{}, core.Errf(core.InvalidParameter, "max_downloads must be >= 0").With("max_downloads", in.MaxDownloads).
			WithHint("Use max_downloads=0 (unlimited) or a positive count")
	}
	z, rel, err := s.ZonePath(ctx, c, in.ZoneArgs, in.Path, false)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	info, err := z.Fs().Stat(rel)
	if err != nil {
		return core.Result{}, core.OpenError(err, z, in.Path)
	}
	if !info.IsDir() && !info.Mode().IsRegular() {
		return core.Result{}, core.Errf(core.NotAFile, "Path is not a file: %s", in.Path).With("path", in.Path).With("zone", z.Label).
			WithHint("Share a regular file or a folder (see shed_tree)")
	}
	name := path.Base(rel)
	if rel == "" {
		name = z.Name
	}
	if s.Config().Links.Mode == "openwebui" {
		return s.linkUpload(ctx, c, z, rel, name, info)
	}
	id, token := s.signer.Issue()
	now := time.Now()
	l := store.Link{ID: id, Owner: c.UserID, Zone: z.Label, GroupID: z.GroupID, Path: rel, IsDir: info.IsDir(),
		Identity: identity(info), Created: now, Expires: now.Add(time.Duration(ttl) * time.Hour), MaxDownloads: in.MaxDownloads,
		Page: page && !info.IsDir()}
	if z.Kind == core.Uploads {
		l.ConvID = c.ConvID
	}
	if err := s.State().AddLink(ctx, l); err != nil {
		return core.Result{}, core.Errf(core.InternalError, "Cannot record the link").Because(err)
	}
	url := s.linkURL(token)
	kind := "file"
	if l.IsDir {
		kind = "folder"
	}
	click := fmt.Sprintf("[📥 %s](%s)", MarkdownEscape(name), url)
	data := LinkCreated{URL: url, ClickableLink: click, LinkID: id, ExpiresAt: l.Expires.UTC().Format(time.RFC3339),
		MaxDownloads: l.MaxDownloads, Zone: z.Label, Path: rel, Kind: kind, Filename: name}
	if !l.IsDir {
		size := info.Size()
		data.SizeBytes = &size
	}
	return core.Result{Data: data, Message: "Link ready: " + click + " (show clickable_link to the user)"}, nil
}

// LinkList answers shed_link_list: the caller's links, newest first, with their state.
func (s *Tools) LinkList(ctx context.Context, c core.Caller, _ LinkListInput) (core.Result, error) {
	ls, err := s.State().LinksOf(ctx, c.UserID)
	if err != nil {
		return core.Result{}, core.Errf(core.InternalError, "Cannot read the links").Because(err)
	}
	out := make([]linkEntry, 0, len(ls))
	for _, l := range ls {
		out = append(out, s.linkEntry(ctx, l))
	}
	msg := fmt.Sprintf("Found %d download link(s)", len(out))
	if len(out) == 0 {
		msg = "No download links found"
	}
	return core.Result{Data: linkList{Links: out, Count: len(out)}, Message: msg}, nil
}

// linkEntry describes one link for shed_link_list. Its state is what a download would
// answer (LinkState: the download's own rule), not only what is stored: after a restore,
// or once the file was replaced, a link whose download answers 410 is not listed active.
// A links.mode openwebui link is Open WebUI's file: its stored state is all there is.
func (s *Tools) linkEntry(ctx context.Context, l store.Link) linkEntry {
	id, owuiLink := strings.CutPrefix(l.ID, owuiLinkPrefix)
	state := l.State(time.Now())
	if !owuiLink {
		state = s.LinkState(ctx, l)
	}
	e := linkEntry{LinkID: l.ID, Zone: l.Zone, Path: l.Path, CreatedAt: l.Created.Format(time.RFC3339),
		ExpiresAt: l.Expires.Format(time.RFC3339), Downloads: l.Downloads, MaxDownloads: l.MaxDownloads,
		State: state, Group: l.GroupID}
	switch {
	case state != store.LinkActive:
	case owuiLink:
		e.URL, e.FileID = s.owuiContentURL(id), id
	case linkIDPattern.MatchString(l.ID):
		e.URL = s.linkURL(s.signer.TokenFor(l.ID))
	}
	return e
}

// linkIDPattern is the form of the ids shed_link_create issues (16 bytes in hex).
var linkIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// LinkDelete answers shed_link_delete: revoke one of the caller's links at once. Another
// user's id answers LINK_NOT_FOUND, exactly like a missing one.
func (s *Tools) LinkDelete(ctx context.Context, c core.Caller, in LinkDeleteInput) (core.Result, error) {
	id := strings.TrimSpace(in.LinkID)
	if id == "" {
		id = strings.TrimSpace(in.FileID)
	}
	if id == "" {
		return core.Result{}, core.Errf(core.MissingFileID, "link_id parameter is required").
			WithHint("Give link_id: list your links with shed_link(action='list')")
	}
	if i := strings.LastIndex(id, "/dl/"); i >= 0 { // a whole URL: take its token
		tok, _, _ := strings.Cut(id[i+4:], "/")
		got, err := s.signer.Verify(tok)
		if err != nil {
			return core.Result{}, core.Errf(core.NotAFileshedLink, "This URL was not made by shed_link_create").With("link_id", core.Shorten(id))
		}
		id = got
	}
	shown := core.Shorten(id)
	if !linkIDPattern.MatchString(id) && !strings.HasPrefix(id, owuiLinkPrefix) {
		id = owuiLinkPrefix + id // maybe the bare Open WebUI file id of a links.mode openwebui link
	}
	now := time.Now()
	l, err := s.State().RevokeLink(ctx, id, c.UserID, now)
	// Why compare the revocation time: RevokeLink writes it only on a link not revoked yet,
	// so a link that reads back revoked at another time was deleted before (by this call's
	// twin, or long ago). The model must not be told twice that it deleted something.
	if errors.Is(err, store.ErrNoLink) || err == nil && l.Revoked.UnixMicro() != now.UnixMicro() {
		return core.Result{}, core.Errf(core.LinkNotFound, "Link not found: %s", shown).With("link_id", shown)
	}
	if err != nil {
		return core.Result{}, core.Errf(core.InternalError, "Cannot revoke the link").Because(err)
	}
	if err := s.linkUnupload(ctx, c, l); err != nil {
		return core.Result{}, err
	}
	return core.Result{Data: linkDeleted{LinkID: id, Path: l.Path, Zone: l.Zone, Deleted: true},
		Message: "Link deleted: " + path.Base("/"+l.Path)}, nil
}

// linkURL is the public address of a token: public_url, never the request's Host.
func (s *Tools) linkURL(token string) string {
	return s.Config().PublicURL() + "/dl/" + token
}

// identity is what tells a file from its replacement (device, inode, size, mtime); folders
// keep device and inode only, since their size and mtime change with their content.
func identity(info os.FileInfo) store.Identity {
	var id store.Identity
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		id.Dev, id.Ino = int64(st.Dev), int64(st.Ino) //nolint:gosec // identities are compared, never used as sizes
	}
	if !info.IsDir() {
		id.Size, id.MtimeNS = info.Size(), info.ModTime().UnixNano()
	}
	return id
}

// markdownEscaper escapes what would break a Markdown link label; line breaks become spaces.
var markdownEscaper = strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`, `(`, `\(`, `)`, `\)`, "*", `\*`, "_", `\_`,
	"`", "\\`", "<", `\<`, ">", `\>`, "!", `\!`, "\r", " ", "\n", " ")

func MarkdownEscape(s string) string { return markdownEscaper.Replace(s) }
