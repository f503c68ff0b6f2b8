package links

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/store"
)

// owuiLinkPrefix marks the ids of links made in links.mode openwebui: "owui:" and the
// Open WebUI file id.
const owuiLinkPrefix = "owui:"

// owuiNever is the expiry of links.mode openwebui links: the Open WebUI copy has none.
var owuiNever = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// linkUpload is shed_link_create in links.mode openwebui (the original's behaviour,
// reference §5.27): the file is uploaded into the caller's Open WebUI files with the
// caller's own session, and the link is Open WebUI's authenticated content URL. The copy
// is a snapshot and does not expire; shed_link_delete removes it.
func (s *Tools) linkUpload(ctx context.Context, c core.Caller, z *core.Zone, rel, name string, info os.FileInfo) (core.Result, error) {
	if info.IsDir() {
		return core.Result{}, core.Errf(core.NotAFile, "Path is not a file: %s", rel).With("path", rel).With("zone", z.Label).
			WithHint("links.mode openwebui shares single files: zip the folder first with shed_archive(action='zip')")
	}
	if s.OpenWebUI() == nil || c.Token() == "" {
		return core.Result{}, core.Errf(core.AuthUnavailable, "links.mode openwebui needs the user's Open WebUI session").
			WithHint("Ask the administrator to use auth.mode session, or links.mode fileshed")
	}
	f, _, err := core.OpenRegular(z, rel, rel, core.ReadDirError)
	if err != nil {
		return core.Result{}, err
	}
	defer f.Close()
	up, err := s.OpenWebUI().Upload(ctx, c.Token(), name, f)
	if errors.Is(err, owui.ErrRefused) { // the original's DB_ERROR: Files.insert_new_file returned None
		return core.Result{}, core.Errf(core.DBError, "Failed to create file entry in database: Open WebUI did not store %s", name).
			With("path", rel).With("zone", z.Label).Because(err).
			WithHint("Open WebUI could not store the file: retry later, or ask the administrator to check Open WebUI's storage")
	}
	if err != nil {
		return core.Result{}, owuiError(err, "uploading the file")
	}
	l := store.Link{ID: owuiLinkPrefix + up.ID, Owner: c.UserID, Zone: z.Label, GroupID: z.GroupID, Path: rel,
		Identity: identity(info), Expires: owuiNever}
	if err := s.State().AddLink(ctx, l); err != nil {
		_ = s.OpenWebUI().DeleteFile(ctx, c.Token(), up.ID)
		return core.Result{}, core.Errf(core.InternalError, "Cannot record the link").Because(err)
	}
	url := s.owuiContentURL(up.ID)
	click := fmt.Sprintf("[📥 Download %s](%s)", MarkdownEscape(name), url)
	return core.Result{Data: LinkUploaded{FileID: up.ID, LinkID: l.ID, URL: url, DownloadURL: url,
		ClickableLink: click, Filename: name, SizeBytes: info.Size(), Zone: z.Label, Path: rel},
		Message: "Link ready: " + click + " (show clickable_link to the user)"}, nil
}

// owuiContentURL is Open WebUI's authenticated download address of a file.
func (s *Tools) owuiContentURL(id string) string {
	return strings.TrimRight(s.Config().OpenWebUI.URL, "/") + "/api/v1/files/" + id + "/content"
}

// linkUnupload removes the Open WebUI copy of a links.mode openwebui link (nothing for
// links served by fileshed). A copy already gone is not an error.
func (s *Tools) linkUnupload(ctx context.Context, c core.Caller, l store.Link) error {
	id, ok := strings.CutPrefix(l.ID, owuiLinkPrefix)
	if !ok {
		return nil
	}
	if s.OpenWebUI() == nil || c.Token() == "" {
		return core.Errf(core.AuthUnavailable, "Removing the Open WebUI copy needs the user's Open WebUI session").
			WithHint("The link is revoked here; delete the file in Open WebUI's interface")
	}
	if err := s.OpenWebUI().DeleteFile(ctx, c.Token(), id); err != nil && !errors.Is(err, owui.ErrNotFound) {
		return owuiError(err, "deleting the file")
	}
	return nil
}

// owuiError maps an Open WebUI failure on the caller's behalf.
func owuiError(err error, doing string) error {
	if errors.Is(err, owui.ErrUnauthorized) {
		return core.Errf(core.AuthInvalid, "Open WebUI refused the session while %s", doing).Because(err)
	}
	return core.Errf(core.AuthUnavailable, "Open WebUI did not answer while %s", doing).Because(err)
}
