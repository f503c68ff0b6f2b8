package transfer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core"

	"golang.org/x/text/unicode/norm"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/owui"
)

// ImportInput is the input of shed_import (reference §5.18, FUNCTIONS.md item 8).
type ImportInput struct {
	FileID          string `json:"file_id,omitempty" doc:"id of a <file> in the chat's <attached_files>"`
	Filename        string `json:"filename,omitempty" doc:"Name of an attached file (instead of file_id)"`
	ImportAll       bool   `json:"import_all,omitempty" doc:"Import every file attached to the chat"`
	DestSubdir      string `json:"dest_subdir,omitempty" doc:"Folder inside Uploads"`
	AllowZoneInPath bool   `json:"allow_zone_in_path,omitempty" doc:"Allow a first folder named like the zone"`
}

// maxDedupe bounds the "name (N).ext" candidates tried for one import.
const maxDedupe = 1000

// Import answers shed_import: files attached to the chat are fetched from Open WebUI
// (GET /api/v1/files/{id}/content, with the caller's own token in session mode, else
// openwebui.admin_api_key and an ownership check) and streamed into
// Uploads/{conversation}/[dest_subdir/]. filename and import_all read the chat's attached
// files (GET /api/v1/chats/{chat id}); import_all answers per-file results.
func (s *Tools) Import(ctx context.Context, c core.Caller, in ImportInput) (core.Result, error) {
	if in.FileID == "" && in.Filename == "" && !in.ImportAll {
		return core.Result{}, core.Errf(core.MissingFileID, "Which file? Give file_id, filename or import_all=true").
			WithHint("file_id is the id of a <file> in the chat's <attached_files>; import_all=true takes every attached file")
	}
	token, admin, err := s.importCredential(c)
	if err != nil {
		return core.Result{}, err
	}
	z, err := s.ResolveZone(ctx, c, "uploads", "", false)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	dir, err := z.Path(in.DestSubdir, in.AllowZoneInPath)
	if err != nil {
		return core.Result{}, err
	}
	files, err := s.importTargets(ctx, c, in, token, admin)
	if err != nil {
		return core.Result{}, err
	}
	imported, failed := []importedFile{}, []importFailure{}
	var first *core.Error
	for _, f := range files {
		item, err := s.importOne(ctx, c, z, dir, f, token, admin)
		if err != nil {
			e, ok := core.AsError(err)
			if !ok {
				e = core.Errf(core.InternalError, "Import of %s failed", f.ID).Because(err)
			}
			if len(files) == 1 {
				return core.Result{}, e
			}
			if first == nil {
				first = e
			}
			failed = append(failed, importFailure{Error: e.Code, FileID: f.ID, Message: e.Message, Name: f.Filename})
			continue
		}
		imported = append(imported, item)
	}
	if len(imported) == 0 {
		return core.Result{}, first.With("errors", failed)
	}
	data := imports{Count: len(imported), Errors: failed, Imported: imported, Zone: "uploads"}
	return core.Result{Data: data, Message: fmt.Sprintf("Imported %d file(s) to Uploads. Use shed_delete(zone='uploads', path='...') to remove.", len(imported))}, nil
}

// imports is the answer of shed_import (fields in the order of the JSON keys,
// alphabetical, as the map it replaces wrote them; errors only when a file failed).
type imports struct {
	Count    int             `json:"count"`
	Errors   []importFailure `json:"errors,omitempty"`
	Imported []importedFile  `json:"imported"`
	Zone     string          `json:"zone"`
}

// importedFile is one file shed_import placed in Uploads.
type importedFile struct {
	FileID string `json:"file_id"`
	Name   string `json:"name"`
	Path   string `json:"path"`
	Size   int64  `json:"size"`
}

// importFailure is one file shed_import could not place (also the details of the refusal
// when every file failed).
type importFailure struct {
	Error   core.Code `json:"error"`
	FileID  string    `json:"file_id"`
	Message string    `json:"message"`
	Name    string    `json:"name"`
}

// importCredential is the token fileshed presents to Open WebUI: the caller's own
// (session mode), else the administrator's API key (admin=true: ownership is then
// checked here).
func (s *Tools) importCredential(c core.Caller) (token string, admin bool, err error) {
	if s.OpenWebUI() == nil {
		return "", false, core.Errf(core.AuthUnavailable, "Imports need openwebui.url: attachments are fetched from Open WebUI's API").
			WithHint("Ask an administrator to set openwebui.url (FILESHED_OPENWEBUI_URL)")
	}
	if t := c.Token(); t != "" {
		return t, false, nil
	}
	if k := s.Config().OpenWebUI.AdminAPIKey; k != "" {
		return k, true, nil
	}
	return "", false, core.Errf(core.AuthUnavailable, "Imports in auth.mode=%s need openwebui.admin_api_key", s.Config().Auth.Mode).
		WithHint("Ask an administrator to set openwebui.admin_api_key (FILESHED_OPENWEBUI_ADMIN_API_KEY), or to use auth.mode=session")
}

// importTargets lists the files to import: the given id, or the chat's attached files
// (all of them, or those named filename).
func (s *Tools) importTargets(ctx context.Context, c core.Caller, in ImportInput, token string, admin bool) ([]owui.FileInfo, error) {
	if in.FileID != "" {
		return []owui.FileInfo{{ID: in.FileID}}, nil
	}
	if admin {
		return nil, core.Errf(core.MissingFileID, "filename and import_all read the chat, which Open WebUI shows only to its owner").
			WithHint("Pass file_id: the id of a <file> in the chat's <attached_files> (or run fileshed in auth.mode=session)")
	}
	if c.ConvID == "unknown" {
		return nil, core.Errf(core.MissingFileID, "No chat id came with the request, so the chat's files cannot be listed").
			WithHint("Pass file_id from the chat's <attached_files>, or enable ENABLE_FORWARD_USER_INFO_HEADERS in Open WebUI")
	}
	files, err := s.OpenWebUI().ChatFiles(ctx, token, c.ConvID)
	switch {
	case errors.Is(err, owui.ErrNotFound), errors.Is(err, owui.ErrInvalidID):
		return nil, core.Errf(core.FileNotFound, "This chat is not known to Open WebUI yet").With("chat_id", c.ConvID).
			WithHint("Pass file_id from the chat's <attached_files>")
	case err != nil:
		return nil, owuiUnavailable(err, "list the chat's files")
	case len(files) == 0:
		return nil, core.Errf(core.FileNotFound, "No files attached to this conversation").
			WithHint("Ask the user to attach the file in the chat, then call shed_import again")
	}
	if in.Filename == "" {
		return files, nil
	}
	want := norm.NFC.String(in.Filename)
	var names []string
	for _, pass := range []func(a, b string) bool{func(a, b string) bool { return a == b }, strings.EqualFold} {
		for _, f := range files {
			if pass(norm.NFC.String(f.Filename), want) {
				return []owui.FileInfo{f}, nil
			}
		}
	}
	for _, f := range files {
		names = append(names, f.Filename)
	}
	return nil, core.Errf(core.FileNotFound, "No attached file named %q", core.Shorten(in.Filename)).With("filename", core.Shorten(in.Filename)).
		With("attached", names).WithHint("Use one of the attached names, a file_id, or import_all=true")
}

// owuiUnavailable is AUTH_UNAVAILABLE for a failed call to Open WebUI.
func owuiUnavailable(err error, what string) *core.Error {
	return core.Errf(core.AuthUnavailable, "Open WebUI could not %s", what).Because(err).
		WithHint("Open WebUI is unreachable or failing: call shed_import again in a moment")
}

// importFileError maps a failed file fetch. Missing, another user's, and (with the
// user's own, just verified, token) refused all read the same: which one is never told.
func importFileError(err error, id string, admin bool) *core.Error {
	refused := errors.Is(err, owui.ErrUnauthorized)
	if errors.Is(err, owui.ErrNotFound) || errors.Is(err, owui.ErrInvalidID) || refused && !admin {
		return core.Errf(core.FileNotFound, "No attached file with id %q that you can read", core.Shorten(id)).With("file_id", core.Shorten(id)).
			WithHint("Use the id of a <file> in this chat's <attached_files>, or import_all=true")
	}
	if refused {
		return core.Errf(core.AuthUnavailable, "Open WebUI refused openwebui.admin_api_key").Because(err).
			WithHint("Ask an administrator to check openwebui.admin_api_key")
	}
	return owuiUnavailable(err, "deliver the file")
}

// importOne fetches one file into dir of the Uploads zone z.
func (s *Tools) importOne(ctx context.Context, c core.Caller, z *core.Zone, dir string, f owui.FileInfo, token string, admin bool) (importedFile, error) {
	info, err := s.OpenWebUI().File(ctx, token, f.ID)
	if err == nil && admin && info.UserID != c.UserID {
		err = owui.ErrNotFound // someone else's file: the same answer as a missing one
	}
	if err != nil {
		return importedFile{}, importFileError(err, f.ID, admin)
	}
	if info.Filename == "" {
		info.Filename = f.Filename
	}
	name := importName(info.Filename, f.ID)
	maxSize := int64(s.Config().MaxFileSizeMB) << 20
	if info.Size > maxSize {
		return importedFile{}, core.Errf(core.FileTooLarge, "%s is %s, over max_file_size_mb (%d MB)", name, core.HumanMB(info.Size), s.Config().MaxFileSizeMB).
			With("file", name).With("size", info.Size).With("limit", maxSize).
			WithHint("Ask an administrator to raise max_file_size_mb, or split the file before attaching it")
	}
	// The file lands under a fresh name in dir: nothing is replaced (placeImport).
	// The announced size is reserved; the meter grows the reservation if more arrives.
	tx, err := s.Begin(ctx, c, core.Edit{Tool: "shed_import", Steps: []core.Step{{Zone: z, Path: dir, Op: core.OpAdd}},
		Quota: &core.Quota{Size: -1, Growth: core.Amount{Bytes: max(info.Size, 0), Files: 1}}})
	if err != nil {
		return importedFile{}, err
	}
	defer tx.Close()
	// A stalled download is abandoned after openwebui.timeout_seconds without a byte; a slow
	// one that keeps sending is not.
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	idle := time.Duration(s.Config().OpenWebUI.TimeoutSeconds) * time.Second
	watchdog := time.AfterFunc(idle, cancel)
	defer watchdog.Stop()
	body, err := s.OpenWebUI().FileContent(dctx, token, f.ID)
	if err != nil {
		return importedFile{}, importFileError(err, f.ID, admin)
	}
	defer body.Close()
	var out importedFile
	_, err = tx.Apply(func() (core.Change, error) {
		w := tx.Fs(z)
		// The destination folders, counted in the quota like any folder a write makes.
		if err := w.MakeDir(dir); err != nil {
			return core.Change{}, core.WriteError(err, z, dir)
		}
		up := &upstream{body: body, progress: func() { watchdog.Reset(idle) }}
		m := tx.Meter(up, name, maxSize)
		temp, release := confine.HoldTemp()
		defer release()
		tmp := path.Join(dir, temp)
		n, err := w.WriteAtomic(tmp, m, 0o600)
		if err != nil {
			return core.Change{}, up.failure(err, m.Refused(), z, name)
		}
		final, err := placeImport(z, w, dir, tmp, name)
		if err != nil {
			_ = w.Remove(tmp)
			return core.Change{}, err
		}
		out = importedFile{FileID: f.ID, Name: path.Base(final), Path: final, Size: n}
		return core.Change{Growth: core.Amount{Bytes: n, Files: 1}}, nil
	})
	if err != nil {
		return importedFile{}, err
	}
	return out, nil
}

// placeImport renames the finished temporary file to name in dir, or to the first free
// "name (N).ext", through w (the transaction's file system): the kernel refuses an
// existing name (no race with a concurrent import).
func placeImport(z *core.Zone, w *core.TxFs, dir, tmp, name string) (string, error) {
	for n := 1; n <= maxDedupe; n++ {
		final := path.Join(dir, dedupeName(name, n))
		err := w.MoveTo(tmp, w, final, true)
		if err == nil {
			return final, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", core.WriteError(err, z, name)
		}
	}
	return "", core.Errf(core.FileExists, "%d files named like %s already exist", maxDedupe, name).With("file", name).
		WithHint("Delete old imports with shed_delete(zone='uploads'), or use dest_subdir")
}
