package files

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/fileshed/fileshed/core"
)

// RenameInput is the input of shed_rename.
type RenameInput struct {
	core.ZoneArgs
	OldPath      string `json:"old_path" required:"true"`
	NewPath      string `json:"new_path" required:"true"`
	Overwrite    bool   `json:"overwrite,omitempty" doc:"Replace an existing file"`
	Message      string `json:"message,omitempty" doc:"Commit message (documents, group)"`
	ExpectedHash string `json:"expected_hash,omitempty" doc:"Hash of your last read; \"new\": must not exist"`
}

// Rename moves a file or folder inside one zone (reference §5.8). Both paths are confined;
// an existing destination is refused with FILE_EXISTS unless overwrite (files only).
func (s *Tools) Rename(ctx context.Context, c core.Caller, in RenameInput) (core.Result, error) {
	if in.OldPath == "" {
		return core.Result{}, core.Errf(core.MissingParameter, "old_path parameter is required").With("parameter", "old_path")
	}
	if in.NewPath == "" {
		return core.Result{}, core.Errf(core.MissingParameter, "new_path parameter is required").With("parameter", "new_path")
	}
	z, err := s.ResolveZone(ctx, c, in.Zone, in.Group, true)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	oldRel, err := z.Path(in.OldPath, in.AllowZoneInPath)
	if err != nil {
		return core.Result{}, err
	}
	newRel, err := renameDest(z, in.NewPath, in.AllowZoneInPath)
	if err != nil {
		return core.Result{}, err
	}
	for _, p := range [][2]string{{oldRel, in.OldPath}, {newRel, in.NewPath}} {
		if p[0] == "" {
			return core.Result{}, core.Errf(core.InvalidPath, "Cannot move the zone root").With("path", p[1]).With("zone", z.Label).
				WithHint("Specify a file or folder within the zone")
		}
	}
	if newRel == oldRel || strings.HasPrefix(newRel, oldRel+"/") {
		return core.Result{}, core.Errf(core.InvalidPath, "Cannot move %s into itself", in.OldPath).With("old_path", in.OldPath).
			With("new_path", in.NewPath).WithHint("Choose a destination outside the source")
	}
	message := in.Message
	if message == "" {
		message = fmt.Sprintf("Rename %s -> %s", oldRel, newRel)
	}
	// expected_hash is old_path's version; "new" says new_path must not exist.
	from, to := core.Step{Zone: z, Path: oldRel, Shown: in.OldPath, Op: core.OpMoveFrom, Expect: in.ExpectedHash},
		core.Step{Zone: z, Path: newRel, Shown: in.NewPath, Op: core.OpMoveTo}
	if e, _ := core.CheckExpectedHash(in.ExpectedHash); e == core.HashNew {
		from.Expect, to.Expect = "", e
	}
	tx, err := s.Begin(ctx, c, core.Edit{Tool: "Rename", Message: message, Steps: []core.Step{from, to},
		Quota: &core.Quota{Size: -1}}) // names carried along; new folders are charged as made
	if err != nil {
		return core.Result{}, err
	}
	defer tx.Close()
	src, dst := tx.Target(0).Info, tx.Target(1)
	// The destination's folders are resolved like the kernel would: a symlinked folder that
	// leads outside the zone is PATH_ESCAPE before anything moves. (The last component is
	// never followed: rename replaces a link, it does not write through it.)
	if dir := path.Dir(newRel); dir != "." {
		if _, err := z.Fs().Confined(dir); err != nil {
			return core.Result{}, core.WriteError(err, z, in.NewPath)
		}
	}
	var replaced core.Amount
	switch {
	case dst.Exists && (!in.Overwrite || dst.Dir):
		e := core.Errf(core.FileExists, "Destination exists: %s", in.NewPath).With("path", in.NewPath).With("zone", z.Label)
		if dst.Dir && in.Overwrite {
			e.WithHint("overwrite=true replaces files, never folders: delete the folder first with shed_delete")
		} else {
			e.WithHint("Choose another new_path, add overwrite=true to replace the file, or shed_delete it first")
		}
		return core.Result{}, e
	case dst.Exists:
		replaced = core.Amount{Bytes: dst.Size, Files: 1} // a file, a link or a special file replaced by the move
	}
	hash, err := tx.Apply(func() (core.Change, error) {
		w := tx.Fs(z)
		if err := w.MakeDir(path.Dir(newRel)); err != nil {
			return core.Change{}, core.WriteError(err, z, in.NewPath)
		}
		if err := w.Rename(oldRel, newRel); err != nil {
			return core.Change{}, core.WriteError(err, z, in.NewPath)
		}
		// The replaced destination, if any, is gone from here on.
		ch := core.Change{Paths: []string{oldRel, newRel}, Growth: core.Sub(core.Amount{}, replaced)}
		// A relative symlink moved elsewhere may now point outside the zone: undo.
		if src.Mode()&fs.ModeSymlink != 0 {
			if _, err := z.Fs().Confined(newRel); err != nil {
				_ = w.Rename(newRel, oldRel)
				return ch, core.WriteError(err, z, in.NewPath).
					WithHint("The symlink's target would be outside the zone from its new place; move its target instead")
			}
		}
		syncDirs(z, oldRel, newRel)
		return ch, nil
	})
	if err != nil {
		return core.Result{}, err
	}
	data := renamed{Commit: hash, NewPath: newRel, OldPath: oldRel, Zone: z.Name}
	return core.Result{Data: data, Message: fmt.Sprintf("Renamed: %s -> %s", oldRel, newRel)}, nil
}

// renamed is the answer of shed_rename (fields in the order of the JSON keys,
// alphabetical; commit only in versioned zones).
type renamed struct {
	Commit  string `json:"commit,omitempty"`
	NewPath string `json:"new_path"`
	OldPath string `json:"old_path"`
	Zone    string `json:"zone"`
}

// renameDest validates new_path. Besides the zone's own name, a first folder named like any
// other zone is refused (unless allowZone): shed_rename never leaves its zone, and a model
// writing "documents/x" from storage means another zone, not a folder of that name.
func renameDest(z *core.Zone, p string, allowZone bool) (string, error) {
	rel, err := z.Path(p, allowZone)
	if err != nil || allowZone {
		return rel, err
	}
	first, rest, _ := strings.Cut(rel, "/")
	if _, isZone := core.ZoneNames[strings.ToLower(first)]; isZone && rest != "" {
		return "", core.Errf(core.PathStartsWithZone, "new_path '%s' starts with zone name '%s'", p, first).
			With("zone", z.Label).With("path", p).With("first_component", first).
			WithHint("shed_rename moves inside the %s zone only ('%s' would be a folder here); between zones use shed_transfer (action storage_to_documents, documents_to_storage, ...), or add allow_zone_in_path=true for a folder named '%s'", z.Label, rest, first)
	}
	return rel, nil
}

// syncDirs makes a rename durable: the directories that lost and gained the entry are
// synced. Failures are not reported: the rename itself is done and visible.
func syncDirs(z *core.Zone, oldRel, newRel string) {
	for _, d := range []string{path.Dir(oldRel), path.Dir(newRel)} {
		if d == "." {
			d = ""
		}
		if f, err := z.Fs().Open(d); err == nil {
			_ = f.Sync()
			_ = f.Close()
		}
	}
}
