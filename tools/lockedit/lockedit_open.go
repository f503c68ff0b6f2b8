package lockedit

import (
	"bytes"
	"context"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/confine"
)

// LockeditOpenInput is the input of shed_lockedit_open.
type LockeditOpenInput struct {
	LockeditPathArgs
}

// LockeditOpen answers shed_lockedit_open (reference §5.9): lock the file for the caller's
// conversation and copy it into the editzone. The same conversation may re-open: the lock
// is refreshed and the working copy re-copied (unsaved edits discarded).
func (s *Tools) LockeditOpen(ctx context.Context, c core.Caller, in LockeditOpenInput) (core.Result, error) {
	z, p, err := s.editPath(ctx, c, in.LockeditPathArgs)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	fi, err := z.Fs().Stat(p)
	if err != nil {
		return core.Result{}, core.PathNotFound(err, z, in.Path)
	}
	if !fi.Mode().IsRegular() {
		return core.Result{}, notAFile(z, in.Path)
	}
	// A member who may not write the file may not lock it either (a lock would deny the
	// owner their own file).
	if err := s.CheckGroupWrite(ctx, c, z, core.WriteModify, p); err != nil {
		return core.Result{}, err
	}
	ez, err := s.Editzone(z, c.ConvID)
	if err != nil {
		return core.Result{}, err
	}
	defer ez.Close()
	unlock, err := s.LockEdit(ctx, z, p)
	if err != nil {
		return core.Result{}, err
	}
	defer unlock()
	if err := s.EditLocks(z).Acquire(ctx, c, p); err != nil {
		return core.Result{}, err
	}
	content, size, err := s.copyToEditzone(ctx, z, ez, p)
	if err == nil && (!utf8.Valid(content) || bytes.IndexByte(content, 0) >= 0) {
		// Raw bytes in a JSON string (\u0000, U+FFFD for what is not UTF-8) are no working
		// copy a model can edit, and saving them back would corrupt the file (issue 23).
		err = core.Errf(core.BinaryFile, "Binary file: %s (%s, %d bytes): a locked edit works on text", p, core.DetectMIME(content), size).
			With("path", p).With("zone", z.Label).With("size", size).
			WithHint("Read its bytes with shed_read_bytes (hex or base64) and change them with shed_patch_bytes")
	}
	if err != nil {
		s.DropWorkingCopy(context.WithoutCancel(ctx), z, ez, p)
		_ = s.EditLocks(z).Release(context.WithoutCancel(ctx), p, c.ConvID)
		return core.Result{}, err
	}
	return core.Result{Data: opened{Content: string(content), Conversation: c.ConvID, IsBinary: false, LockedBy: c.UserID,
		Hash: core.HashOf(content), Path: p, Size: size, Zone: z.Name}, Message: "File opened for editing: " + p}, nil
}

// opened is the answer of shed_lockedit open (fields in the order of the JSON keys,
// alphabetical, as the map it replaces wrote them).
type opened struct {
	Content      string `json:"content"`
	Conversation string `json:"conversation"`
	Hash         string `json:"hash"`
	IsBinary     bool   `json:"is_binary"`
	LockedBy     string `json:"locked_by"`
	Path         string `json:"path"`
	Size         int64  `json:"size"`
	Zone         string `json:"zone"`
}

// copyToEditzone copies the zone file p to the working copy (atomically, 0600, parents
// 0700), its bytes reserved against the quota first, and returns the copied bytes.
func (s *Tools) copyToEditzone(ctx context.Context, z *core.Zone, ez *confine.Fs, p string) ([]byte, int64, error) {
	src, err := z.Fs().Open(p)
	if err != nil {
		return nil, 0, core.PathNotFound(err, z, p)
	}
	defer src.Close()
	data, err := io.ReadAll(io.LimitReader(src, int64(maxEditBytes)+1))
	if err != nil {
		return nil, 0, core.ReadFail(err, z, p)
	}
	if len(data) > maxEditBytes {
		return nil, 0, core.Errf(core.FileTooLarge, "%s is larger than %d MB: too large for a locked edit", p, maxEditBytes>>20).
			With("path", p).WithHint("Edit large files with shed_patch_text / shed_patch_bytes instead")
	}
	n, err := s.WriteWorkingCopy(ctx, z, ez, p, int64(len(data)), bytes.NewReader(data), false)
	if err != nil {
		return nil, 0, err
	}
	return data, n, nil
}

// maxEditBytes bounds what a locked edit copies and returns in one answer (the original sent
// any size whole; the working copy round-trips through the model's context).
const maxEditBytes = 64 << 20

// LockeditOverwriteInput is the input of shed_lockedit_overwrite.
type LockeditOverwriteInput struct {
	LockeditPathArgs
	Content string `json:"content" required:"true" empty:"value"`
	Append  bool   `json:"append,omitempty"`
}

// LockeditOverwrite answers shed_lockedit_overwrite (reference §5.11): replace or append to
// the working copy. Nothing reaches the zone before shed_lockedit_save; the size limit
// applies to the resulting working copy (the original let appends grow past it).
func (s *Tools) LockeditOverwrite(ctx context.Context, c core.Caller, in LockeditOverwriteInput) (core.Result, error) {
	if strings.IndexByte(in.Content, 0) >= 0 || !utf8.ValidString(in.Content) {
		return core.Result{}, core.Errf(core.InvalidParameter, "Content must be UTF-8 text without NUL bytes").With("path", in.Path).
			WithHint("Send text; for binary content use shed_patch_bytes")
	}
	e, err := s.heldEdit(ctx, c, in.LockeditPathArgs)
	if err != nil {
		return core.Result{}, err
	}
	defer e.done()
	z, ez, p := e.z, e.ez, e.p
	fi, err := workingCopy(z, ez, p)
	if err != nil {
		return core.Result{}, err
	}
	newSize, mode := int64(len(in.Content)), "overwrite"
	if in.Append {
		newSize, mode = fi.Size()+newSize, "append"
	}
	if maxSize := int64(s.Config().MaxFileSizeMB) << 20; newSize > maxSize {
		return core.Result{}, core.Errf(core.FileTooLarge, "Content too large: the working copy would be %d bytes", newSize).
			With("size", newSize).With("limit", maxSize).With("max_mb", s.Config().MaxFileSizeMB).
			WithHint("Max size is %d MB", s.Config().MaxFileSizeMB)
	}
	if _, err := s.WriteWorkingCopy(ctx, z, ez, p, newSize, strings.NewReader(in.Content), in.Append); err != nil {
		return core.Result{}, err
	}
	return core.Result{Data: overwritten{BytesWritten: len(in.Content), Mode: mode, NewSize: newSize, Path: p, Zone: z.Name},
		Message: "Content written to editzone"}, nil
}

// overwritten is the answer of shed_lockedit overwrite (fields in the order of the JSON
// keys, alphabetical, as the map it replaces wrote them).
type overwritten struct {
	BytesWritten int    `json:"bytes_written"`
	Mode         string `json:"mode"`
	NewSize      int64  `json:"new_size"`
	Path         string `json:"path"`
	Zone         string `json:"zone"`
}
