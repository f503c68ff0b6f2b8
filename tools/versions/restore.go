package versions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/vcs"
)

// HistoryInput is the input of shed_history.
type HistoryInput struct {
	core.ZoneArgs
	Path  string `json:"path,omitempty" default:"."`
	Limit int    `json:"limit,omitempty" default:"20" minimum:"1" maximum:"1000" doc:"1-1000"`
}

// History answers shed_history (our addition): the commits that changed a path in a
// versioned zone (documents, group), newest first. Read-only.
func (s *Tools) History(ctx context.Context, c core.Caller, in HistoryInput) (core.Result, error) {
	z, err := s.versionedZone(ctx, c, in.ZoneArgs, false)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	if in.Limit < 1 || in.Limit > 1000 {
		return core.Result{}, core.Errf(core.InvalidParameter, "Limit must be between 1 and 1000").With("limit", in.Limit)
	}
	p := ""
	if in.Path != "" && in.Path != "." {
		if p, err = z.Path(in.Path, in.AllowZoneInPath); err != nil {
			return core.Result{}, err
		}
	}
	r, err := s.Repo(z)
	if err != nil {
		return core.Result{}, err
	}
	defer r.Release()
	log, err := r.Log(p, in.Limit)
	if err != nil {
		return core.Result{}, vcsError(z, in.Path, err)
	}
	entries := make([]historyEntry, 0, len(log))
	for _, e := range log {
		entries = append(entries, historyEntry{Hash: e.Hash, Short: e.Hash[:8], Author: e.Author,
			Message: e.Message, Date: e.When.UTC().Format(time.RFC3339)})
	}
	shown := p
	if shown == "" {
		shown = "."
	}
	return core.Result{Data: historyList{Zone: z.Name, Path: shown, Entries: entries, Count: len(entries)},
		Message: fmt.Sprintf("%d version(s) of %s", len(entries), shown)}, nil
}

// RestoreInput is the input of shed_restore.
type RestoreInput struct {
	core.ZoneArgs
	Path    string `json:"path" required:"true"`
	Version string `json:"version" required:"true"`
	Message string `json:"message,omitempty" doc:"Commit message"`
}

// Restore answers shed_restore (our addition): write the content a file had at an earlier
// version and commit it as a new version. History only grows: HEAD never moves back, so the
// restore itself can be undone the same way. Honours locked edits and the quota.
func (s *Tools) Restore(ctx context.Context, c core.Caller, in RestoreInput) (core.Result, error) {
	z, err := s.versionedZone(ctx, c, in.ZoneArgs, true)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	p, err := z.Path(in.Path, in.AllowZoneInPath)
	if err == nil && p == "" {
		err = core.Errf(core.InvalidPath, "Restore needs a file path, not the zone root").With("path", in.Path)
	}
	if err != nil {
		return core.Result{}, err
	}
	r, err := s.Repo(z)
	if err != nil {
		return core.Result{}, err
	}
	defer r.Release()
	data, err := r.FileAt(in.Version, p)
	if err != nil {
		return core.Result{}, vcsError(z, in.Path, err).With("version", in.Version)
	}
	msg := in.Message
	if msg == "" {
		msg = fmt.Sprintf("shed_restore: %s from %s", p, in.Version)
	}
	// A deleted file brought back is a new file of the caller's.
	tx, _, err := s.BeginWrite(ctx, c, z, p, in.Path, core.Edit{Tool: "shed_restore", Message: msg})
	if e, ok := core.AsError(err); ok && e.Code == core.NotAFile {
		return core.Result{}, core.Errf(core.NotAFile, "Cannot restore over a directory: %s", in.Path).With("path", in.Path).
			WithHint("Rename or delete the folder first (shed_rename / shed_delete)")
	}
	if err != nil {
		return core.Result{}, err
	}
	defer tx.Close()
	size := int64(len(data))
	hash, err := tx.WriteFile(core.Write{Size: size, Body: bytes.NewReader(data)})
	if err != nil {
		return core.Result{}, err
	}
	msgOut := fmt.Sprintf("Restored %s from %s", p, in.Version)
	if hash == "" {
		msgOut = fmt.Sprintf("%s already has the content of %s: nothing to commit", p, in.Version)
	}
	return core.Result{Data: restored{Zone: z.Name, Path: p, Version: in.Version, Size: size,
		Committed: hash != "", Commit: hash}, Message: msgOut}, nil
}

// versionedZone resolves a zone that must be versioned (documents or a group).
func (s *Tools) versionedZone(ctx context.Context, c core.Caller, a core.ZoneArgs, write bool) (*core.Zone, error) {
	z, err := s.ResolveZone(ctx, c, a.Zone, a.Group, write)
	if err != nil {
		return nil, err
	}
	if !z.Versioned {
		z.Close()
		return nil, core.Errf(core.ZoneForbidden, "The %s zone is not versioned", z.Name).With("zone", z.Label).
			WithHint("History exists only in zone='documents' and group zones")
	}
	return z, nil
}

// vcsError maps a history read failure to the catalogue (zone-relative paths only).
func vcsError(z *core.Zone, p string, err error) *core.Error {
	switch {
	case errors.Is(err, vcs.ErrNotFound):
		return core.Errf(core.FileNotFound, "No such version of %s: %v", p, err).With("path", p).With("zone", z.Label).
			WithHint("List the versions with shed_version(action='history')(zone, path) and pass one of their hashes, or HEAD~N")
	case errors.Is(err, vcs.ErrIsDir):
		return core.Errf(core.NotAFile, "%s is a folder in that version", p).With("path", p).
			WithHint("Restore files one by one; list them with shed_exec git show VERSION --stat")
	case errors.Is(err, vcs.ErrInvalidPath), errors.Is(err, vcs.ErrSymlinkInPath):
		return core.Errf(core.InvalidPath, "Invalid path for history: %s", p).With("path", p).Because(err)
	}
	return core.Errf(core.ExecutionError, "The %s repository cannot be read", z.Name).Because(err).
		WithHint("Run shed_info(action='maintenance') to check and repair the repository")
}
