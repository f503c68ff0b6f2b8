package transfer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/confine"
)

// BridgeArgs are the arguments of every zone bridge (reference §5.14-§5.17).
type BridgeArgs struct {
	Src             string `json:"src" required:"true"`
	Dest            string `json:"dest" required:"true" doc:"A trailing / keeps the name"`
	Overwrite       bool   `json:"overwrite,omitempty" doc:"Replace an existing destination file"`
	AllowZoneInPath bool   `json:"allow_zone_in_path,omitempty" doc:"Allow a first folder named like the zone"`
	ExpectedHash    string `json:"expected_hash,omitempty" doc:"Hash of your last read; \"new\": must not exist"`
}

// BridgeCommitInput is the input of the bridges that touch Documents (a commit message).
type BridgeCommitInput struct {
	BridgeArgs
	Message string `json:"message,omitempty" doc:"Commit message"`
}

// bridge describes one of the four zone bridges.
type bridge struct {
	tool     string
	from, to string // zone labels
	move     bool
	done     string // message verb
	commit   string // default commit message, %s = the source path
}

var (
	uploadsToStorage   = bridge{tool: "shed_move_uploads_to_storage", from: "uploads", to: "storage", move: true, done: "Moved"}
	uploadsToDocuments = bridge{tool: "shed_move_uploads_to_documents", from: "uploads", to: "documents", move: true, done: "Moved and committed", commit: "Import %s"}
	storageToDocuments = bridge{tool: "shed_copy_storage_to_documents", from: "storage", to: "documents", done: "Copied and committed", commit: "Import from Storage: %s"}
	documentsToStorage = bridge{tool: "shed_move_documents_to_storage", from: "documents", to: "storage", move: true, done: "Moved", commit: "Move to Storage: %s"}
)

// MoveUploadsToStorage answers shed_move_uploads_to_storage (reference §5.14).
func (s *Tools) MoveUploadsToStorage(ctx context.Context, c core.Caller, in BridgeArgs) (core.Result, error) {
	return s.bridge(ctx, c, uploadsToStorage, in, "")
}

// MoveUploadsToDocuments answers shed_move_uploads_to_documents (reference §5.15).
func (s *Tools) MoveUploadsToDocuments(ctx context.Context, c core.Caller, in BridgeCommitInput) (core.Result, error) {
	return s.bridge(ctx, c, uploadsToDocuments, in.BridgeArgs, in.Message)
}

// CopyStorageToDocuments answers shed_copy_storage_to_documents (reference §5.16).
func (s *Tools) CopyStorageToDocuments(ctx context.Context, c core.Caller, in BridgeCommitInput) (core.Result, error) {
	return s.bridge(ctx, c, storageToDocuments, in.BridgeArgs, in.Message)
}

// MoveDocumentsToStorage answers shed_move_documents_to_storage (reference §5.17).
func (s *Tools) MoveDocumentsToStorage(ctx context.Context, c core.Caller, in BridgeCommitInput) (core.Result, error) {
	return s.bridge(ctx, c, documentsToStorage, in.BridgeArgs, in.Message)
}

// bridge moves or copies a file or folder between two zones of the caller. A move is one
// rename(2) between the zones (same file system): a crash leaves the entry at exactly one
// place, and the quota does not change (all personal zones count against the same
// owner). A copy is staged beside the destination and renamed into place (stageCopy). An
// existing destination is replaced only with overwrite, and only file over file (also
// atomically). The versioned side commits, with the caller as author.
func (s *Tools) bridge(ctx context.Context, c core.Caller, b bridge, in BridgeArgs, message string) (core.Result, error) {
	for _, p := range [][2]string{{"src", in.Src}, {"dest", in.Dest}} {
		if p[1] == "" {
			return core.Result{}, core.Errf(core.MissingParameter, "Parameter '%s' is required", p[0]).With("parameter", p[0]).
				WithHint("Call %s(src='report.pdf', dest='reports/report.pdf')", b.tool)
		}
	}
	src, err := s.ResolveZone(ctx, c, b.from, "", false)
	if err != nil {
		return core.Result{}, err
	}
	defer src.Close()
	dst, err := s.ResolveZone(ctx, c, b.to, "", true)
	if err != nil {
		return core.Result{}, err
	}
	defer dst.Close()
	srcRel, err := src.Path(in.Src, in.AllowZoneInPath)
	if err != nil {
		return core.Result{}, err
	}
	// src='.' in Uploads moves the conversation's whole upload folder (reference §5.14).
	whole := srcRel == "" && src.Kind == core.Uploads && b.move
	if srcRel == "" && !whole {
		return core.Result{}, core.Errf(core.InvalidPath, "Cannot move the whole %s zone", src.Name).With("path", in.Src).With("zone", src.Label).
			WithHint("Give a file or folder inside %s (see shed_tree(zone='%s'))", src.Name, src.Label)
	}
	destRel, err := bridgeDest(dst, in.Dest, srcRel, in.AllowZoneInPath)
	if err != nil {
		return core.Result{}, err
	}
	shownSrc := srcRel
	if whole {
		shownSrc = "."
	}
	if message == "" && b.commit != "" {
		message = fmt.Sprintf(b.commit, shownSrc)
	}
	from, fromRel := src, srcRel
	if whole {
		// The conversation's folder is moved from its parent; the next call recreates it.
		if from, err = src.UploadsParent(); err != nil {
			return core.Result{}, err
		}
		defer from.Close()
		fromRel = c.ConvID
	}
	if _, err := bridgeSource(src, srcRel, in.Src); err != nil {
		return core.Result{}, err // missing: said with the word about shed_import
	}
	first := core.Step{Zone: from, Path: fromRel, Shown: in.Src, Op: core.OpCopyFrom}
	if b.move {
		first.Op = core.OpMoveFrom
	}
	var tree core.TreeInfo
	var exists bool
	var replaced, names int64
	// The scan, under the transaction's locks, tells what the bridge needs of the quota.
	plan := func(*core.Tx) (int64, core.Amount, error) {
		var err error
		if tree, err = bridgeSource(src, srcRel, in.Src); err != nil {
			return 0, core.Amount{}, err
		}
		if exists, replaced, err = bridgeTarget(dst, destRel, in, tree.Dir); err != nil {
			return 0, core.Amount{}, err
		}
		names = bridgeNames(b.move, whole, exists, tree, src, dst)
		growth := core.Amount{Bytes: -replaced, Files: names}
		if !b.move {
			growth.Bytes = tree.Size - replaced
		}
		return -1, growth, nil
	}
	tx, err := s.Begin(ctx, c, core.Edit{Tool: b.tool, Message: message, Steps: []core.Step{first,
		{Zone: dst, Path: destRel, Shown: in.Dest, Op: core.OpMoveTo, Expect: in.ExpectedHash}}, Quota: &core.Quota{Plan: plan}})
	if err != nil {
		return core.Result{}, err
	}
	defer tx.Close()
	// The versioned side commits: Documents as destination, else Documents as source.
	vrel := destRel
	if !dst.Versioned && src.Versioned {
		vrel = srcRel
	}
	hash, err := tx.Apply(func() (core.Change, error) {
		if err := tx.Fs(dst).MakeDir(path.Dir(destRel)); err != nil {
			return core.Change{}, core.WriteError(err, dst, in.Dest)
		}
		n, err := core.Carry(ctx, from, fromRel, tree, dst, destRel, in.Dest, b.move, in.Overwrite)
		if err != nil {
			return core.Change{}, err
		}
		ch := core.Change{Paths: []string{vrel}, Growth: core.Amount{Bytes: -replaced, Files: names}}
		if !b.move {
			ch.Growth.Bytes = n - replaced
		}
		return ch, nil
	})
	if err != nil {
		return core.Result{}, err
	}
	kind := "file"
	if tree.Dir {
		kind = "folder"
	}
	data := bridged{Bytes: tree.Size, Commit: hash, Dest: destRel, DestZone: dst.Name, Files: len(tree.Files), Replaced: exists,
		Src: shownSrc, SrcZone: src.Name, Type: kind}
	return core.Result{Data: data, Message: fmt.Sprintf("%s: %s/%s -> %s/%s", b.done, src.Name, shownSrc, dst.Name, destRel)}, nil
}

// bridged is the answer of a bridge (fields in the order of the JSON keys, alphabetical, as
// the map it replaces wrote them; commit only when a versioned side committed).
type bridged struct {
	Bytes    int64  `json:"bytes"`
	Commit   string `json:"commit,omitempty"`
	Dest     string `json:"dest"`
	DestZone string `json:"dest_zone"`
	Files    int    `json:"files"`
	Replaced bool   `json:"replaced"`
	Src      string `json:"src"`
	SrcZone  string `json:"src_zone"`
	Type     string `json:"type"`
}

// bridgeSource describes the source: FILE_NOT_FOUND (with a word about shed_import for
// Uploads) when missing, else its scanned tree.
func bridgeSource(src *core.Zone, srcRel, shown string) (core.TreeInfo, error) {
	fi, _, err := src.Fs().LstatIfPossible(srcRel)
	if errors.Is(err, fs.ErrNotExist) {
		e := core.Errf(core.FileNotFound, "File not found in %s: %s", src.Name, shown).With("path", shown).With("zone", src.Label).
			WithHint("Check the path with shed_tree(zone='%s')", src.Label)
		if src.Kind == core.Uploads {
			e.WithHint("Did you call shed_import first? Files must be imported before moving (shed_tree(zone='uploads') lists them)")
		}
		return core.TreeInfo{}, e
	}
	if err != nil {
		return core.TreeInfo{}, core.WriteError(err, src, shown)
	}
	return core.ScanTree(src, srcRel, fi)
}

// bridgeDest validates dest; the zone root, or a path ending in '/', means "into this
// folder, under the source's name". A whole folder (srcRel "") needs a name.
func bridgeDest(z *core.Zone, dest, srcRel string, allowZone bool) (string, error) {
	rel, err := z.Path(dest, allowZone)
	if err != nil {
		return "", err
	}
	if srcRel == "" {
		if rel == "" {
			return "", core.Errf(core.InvalidPath, "Give the folder to create for the whole upload folder").With("path", dest).With("zone", z.Label).
				WithHint("Use e.g. dest='imports/this-chat'")
		}
		return rel, nil
	}
	if rel == "" || strings.HasSuffix(dest, "/") || strings.HasSuffix(dest, `\`) {
		rel = path.Join(rel, path.Base(srcRel))
	}
	return rel, nil
}

// bridgeTarget checks the destination: its folders must stay inside the zone; an existing
// entry is FILE_EXISTS unless overwrite replaces a regular file by a file. It returns
// whether a file is replaced and its size.
func bridgeTarget(dst *core.Zone, destRel string, in BridgeArgs, dir bool) (bool, int64, error) {
	if d := path.Dir(destRel); d != "." {
		if _, err := dst.Fs().Confined(d); err != nil {
			return false, 0, core.WriteError(err, dst, in.Dest)
		}
	}
	fi, _, err := dst.Fs().LstatIfPossible(destRel)
	switch {
	case err == nil && (!in.Overwrite || dir || !fi.Mode().IsRegular()):
		return false, 0, core.DestExists(dst, in.Dest, dir || fi.IsDir(), in.Overwrite)
	case err == nil:
		return true, fi.Size(), nil
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, confine.ErrNotDir):
		return false, 0, core.ParentNotDir(dst, in.Dest)
	case !errors.Is(err, fs.ErrNotExist):
		return false, 0, core.WriteError(err, dst, in.Dest)
	}
	return false, 0, nil
}

// bridgeNames is the change of the destination owner's names: a copy adds those it writes;
// a rename carries every name along (one owner on both sides), but a whole upload folder
// was a zone root, never counted, and becomes a folder; a move that recodes is a copy, then
// the source's removal; a file replaced gives its name back.
func bridgeNames(move, whole, exists bool, tree core.TreeInfo, src, dst *core.Zone) int64 {
	names := tree.Copied
	if move {
		if !core.Recodes(move, src, dst) {
			names = tree.Names
		}
		names -= tree.Names
		if whole {
			names++
		}
	}
	if exists {
		names--
	}
	return names
}
