package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/confine"
)

// DeleteInput is the input of shed_delete.
type DeleteInput struct {
	core.ZoneArgs
	Path         string `json:"path" required:"true"`
	Message      string `json:"message,omitempty" doc:"Commit message (documents, group)"`
	ExpectedHash string `json:"expected_hash,omitempty" doc:"Hash of your last read; \"new\": must not exist"`
}

// Delete removes a file, a symlink (never its target) or a folder with everything in it
// (reference §5.7). Uploads allows it (to clean imports). The bytes removed are counted
// while deleting and given back to the quota.
func (s *Tools) Delete(ctx context.Context, c core.Caller, in DeleteInput) (core.Result, error) {
	z, rel, err := s.ZonePath(ctx, c, in.ZoneArgs, in.Path, false)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	if rel == "" {
		return core.Result{}, core.Errf(core.InvalidPath, "Cannot delete zone root").With("path", in.Path).With("zone", z.Label).
			WithHint("Specify a file or folder within the zone")
	}
	// A .git is protected where the kernel says so, through the transaction: in a versioned
	// zone in any spelling and at any depth (core.ProtectedReason), and the one at the top of
	// any zone is never removed (core.KeptClone).
	message := in.Message
	if message == "" {
		message = "Delete " + rel
	}
	tx, err := s.Begin(ctx, c, core.Edit{Tool: "Delete", Message: message, Steps: []core.Step{{Zone: z, Path: rel, Shown: in.Path, Op: core.OpRemove, Expect: in.ExpectedHash}},
		Quota: &core.Quota{Size: -1}}) // nothing added: what the delete frees is settled
	if err != nil {
		return core.Result{}, err
	}
	defer tx.Close()
	fi := tx.Target(0).Info
	var freed core.Amount
	exact := true
	hash, err := tx.Apply(func() (core.Change, error) {
		var err error
		w := tx.Fs(z)
		freed, err = removeTree(w, rel, fi)
		if errors.Is(err, confine.ErrInvalid) {
			// A name below that no model could have given (control characters, invalid
			// UTF-8, made by a command): remove the rest in one go and re-measure the usage.
			exact, err = false, w.RemoveAll(rel)
		}
		ch := core.Change{Paths: []string{rel}, Growth: core.Sub(core.Amount{}, freed)}
		if err != nil {
			return ch, core.WriteError(err, z, in.Path)
		}
		return ch, nil
	})
	tx.Close() // the owner's usage is free for the measure below
	if !exact {
		if _, _, rerr := s.Reconcile(ctx, z.Owner); rerr != nil {
			return core.Result{}, core.Errf(core.InternalError, "Cannot measure the quota after deleting").Because(rerr)
		}
	}
	if err != nil {
		return core.Result{}, err
	}
	data := deleted{BytesFreed: freed.Bytes, Commit: hash, Deleted: rel, WasDirectory: fi.IsDir(), Zone: z.Name}
	return core.Result{Data: data, Message: fmt.Sprintf("Deleted: %s", rel)}, nil
}

// deleted is the answer of shed_delete (fields in the order of the JSON keys,
// alphabetical; commit only in versioned zones).
type deleted struct {
	BytesFreed   int64  `json:"bytes_freed"`
	Commit       string `json:"commit,omitempty"`
	Deleted      string `json:"deleted"`
	WasDirectory bool   `json:"was_directory"`
	Zone         string `json:"zone"`
}

// removeTree removes rel (described by fi, not followed if a symlink) and everything below
// it, depth first, and returns the bytes of the regular files and the names it removed,
// counted as they go (so the quota is given back exactly what was freed, even when it
// stops half-way).
func removeTree(z *core.TxFs, rel string, fi fs.FileInfo) (core.Amount, error) {
	if fi.IsDir() {
		d, err := z.Open(rel)
		if err != nil {
			return core.Amount{}, err
		}
		entries, err := d.Readdir(-1)
		_ = d.Close()
		if err != nil {
			return core.Amount{}, err
		}
		var freed core.Amount
		for _, e := range entries {
			// Why: Clean would read a name such as `..\x` (made by a command) as a path and
			// name another file; such names are left to RemoveAll, which never parses them.
			if c, err := confine.Clean(e.Name()); err != nil || c != e.Name() {
				return freed, confine.ErrInvalid
			}
			n, err := removeTree(z, path.Join(rel, e.Name()), e)
			freed.Bytes += n.Bytes
			freed.Files += n.Files
			if err != nil {
				return freed, err
			}
		}
		if err := z.Remove(rel); err != nil {
			return freed, err
		}
		freed.Files++
		return freed, nil
	}
	if err := z.Remove(rel); err != nil {
		return core.Amount{}, err
	}
	if fi.Mode().IsRegular() {
		return core.Amount{Bytes: fi.Size(), Files: 1}, nil
	}
	return core.Amount{Files: 1}, nil
}
