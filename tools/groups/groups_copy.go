package groups

import (
	"context"
	"fmt"
	"strings"

	"github.com/fileshed/fileshed/core"
)

// CopyToGroupInput is the input of shed_copy_to_group (reference §5.44).
type CopyToGroupInput struct {
	SrcZone         string `json:"src_zone" required:"true" enum:"uploads,storage,documents"`
	SrcPath         string `json:"src_path" required:"true"`
	Group           string `json:"group" required:"true" doc:"Group id or exact name"`
	DestPath        string `json:"dest_path" required:"true"`
	Message         string `json:"message,omitempty" default:"Add file to group" doc:"Commit message"`
	Mode            string `json:"mode,omitempty" doc:"New files: owner, group or owner_ro"`
	Overwrite       bool   `json:"overwrite,omitempty" doc:"Replace existing files (never folders)"`
	AllowZoneInPath bool   `json:"allow_zone_in_path,omitempty" doc:"Allow a first folder named like the zone"`
	ExpectedHash    string `json:"expected_hash,omitempty" doc:"Hash of your last read; \"new\": must not exist"`
}

// CopyToGroup answers shed_copy_to_group: copy a file (or a folder's regular files) from
// the caller's uploads, storage or documents into a group space, in one commit. Unlike the
// original, nothing is removed before every check passed (ownership of each replaced file,
// size, quota), symlinks are never followed or copied, and every created file gets an
// ownership record (mode, or group_default_mode); replaced files keep their record.
func (s *Tools) CopyToGroup(ctx context.Context, c core.Caller, in CopyToGroupInput) (core.Result, error) {
	switch strings.ToLower(strings.TrimSpace(in.SrcZone)) {
	case "uploads", "storage", "documents":
	case "":
		return core.Result{}, core.Errf(core.MissingParameter, "src_zone is required").With("parameter", "src_zone")
	default:
		return core.Result{}, core.Errf(core.ZoneForbidden, "Invalid source zone: %s", in.SrcZone).With("src_zone", in.SrcZone).
			WithHint("Use 'uploads', 'storage', or 'documents'")
	}
	mode, err := s.GroupMode(in.Mode)
	if err != nil {
		return core.Result{}, err
	}
	from, src, err := s.ZonePath(ctx, c, core.ZoneArgs{Zone: in.SrcZone, AllowZoneInPath: in.AllowZoneInPath}, in.SrcPath, false)
	if err != nil {
		return core.Result{}, err
	}
	defer from.Close()
	to, dst, err := s.ZonePath(ctx, c, core.ZoneArgs{Zone: "group", Group: in.Group, AllowZoneInPath: in.AllowZoneInPath}, in.DestPath, true)
	if err != nil {
		return core.Result{}, err
	}
	defer to.Close()
	if src == "" || dst == "" {
		return core.Result{}, core.Errf(core.InvalidPath, "Cannot copy a zone root: give a file or folder").With("src_path", in.SrcPath).
			With("dest_path", in.DestPath).WithHint("Name a file or folder inside the zone, e.g. src_path='report.pdf'")
	}
	job := &core.CopyJob{From: from, To: to, Overwrite: in.Overwrite, Mode: mode, Expect: in.ExpectedHash}
	if err := s.PlanCopy(job, src, dst, in.SrcPath); err != nil {
		return core.Result{}, err
	}
	message := in.Message
	if message == "" {
		message = "Add file to group"
	}
	hash, written, err := s.RunCopy(ctx, c, job, "shed_copy_to_group", message)
	if err != nil {
		return core.Result{}, err
	}
	data := groupCopied{SrcZone: in.SrcZone, SrcPath: src, Group: to.GroupID, DestPath: dst, Mode: mode,
		FilesCopied: len(job.Items), BytesCopied: written, SkippedNotRegular: job.Skipped, Commit: hash}
	return core.Result{Data: data, Message: fmt.Sprintf("File copied to group '%s' with mode '%s'", to.GroupID, mode)}, nil
}
