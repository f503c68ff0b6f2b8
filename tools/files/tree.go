package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/confine"
)

// TreeInput is the input of shed_tree.
type TreeInput struct {
	core.ZoneArgs
	Path  string `json:"path,omitempty" default:"."`
	Depth int    `json:"depth,omitempty" default:"3" minimum:"1" maximum:"10" doc:"1-10"`
}

// treeMaxEntries is the number of entries listed per directory before "... and N more".
const treeMaxEntries = 100

// Tree renders a directory tree of a zone (reference §5.21): directories first, 100
// entries per directory, symlinks shown but never followed. It shows every entry a
// download ships (shed_zip, a folder link), dotfiles too, unlike the original, which hid
// them (issue 32: nothing shipped is hidden); a protected name that exists (a .git in a
// versioned zone, which no download ships) is shown, marked, without what is inside it;
// fileshed's temporary files (writes in flight) are not shown.
func (s *Tools) Tree(ctx context.Context, c core.Caller, in TreeInput) (core.Result, error) {
	z, err := s.ResolveZone(ctx, c, in.Zone, in.Group, false)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	if in.Depth < 0 {
		return core.Result{}, core.Errf(core.InvalidParameter, "Depth must be non-negative").With("depth", in.Depth).
			WithHint("Use depth between 1 and 10")
	}
	depth := min(max(in.Depth, 1), 10)
	rel := ""
	if in.Path != "" && in.Path != "." {
		if rel, err = z.Path(in.Path, in.AllowZoneInPath); err != nil {
			return core.Result{}, err
		}
	}
	shown := in.Path
	if rel == "" {
		shown = "."
	}
	info, err := z.Fs().Stat(rel)
	if err != nil {
		return core.Result{}, core.PathNotFound(err, z, in.Path)
	}
	if !info.IsDir() {
		return core.Result{}, core.Errf(core.InvalidParameter, "Not a directory: %s", in.Path).With("path", in.Path).
			WithHint("shed_tree lists folders; use shed_file_type or shed_read for a file")
	}
	root := path.Base(rel)
	if rel == "" {
		root = strings.ToUpper(z.Label[:1]) + z.Label[1:]
		if z.Kind == core.GroupZone {
			root = in.Group
		}
	}
	var b strings.Builder
	b.WriteString(root + "/\n")
	empty, err := s.renderTree(z, rel, "", depth, &b)
	if err != nil {
		return core.Result{}, err
	}
	data := tree{Depth: depth, Path: shown, Tree: strings.TrimRight(b.String(), "\n"), Zone: z.Name}
	msg := fmt.Sprintf("Tree of %s/%s (depth=%d)", z.Name, shown, depth)
	if empty && rel == "" {
		data.Tree = "(empty)"
		msg = "Zone is empty"
	}
	return core.Result{Data: data, Message: msg}, nil
}

// tree is the answer of shed_tree (fields in the order of the JSON keys, alphabetical).
type tree struct {
	Depth int    `json:"depth"`
	Path  string `json:"path"`
	Tree  string `json:"tree"`
	Zone  string `json:"zone"`
}

func (s *Tools) renderTree(z *core.Zone, dir, prefix string, depth int, b *strings.Builder) (empty bool, err error) {
	f, err := z.Fs().Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			b.WriteString(prefix + "[permission denied]\n")
			return false, nil
		}
		return false, core.PathNotFound(err, z, dir)
	}
	entries, err := f.Readdir(-1)
	_ = f.Close()
	if err != nil {
		return false, core.Errf(core.InternalError, "Cannot list %s", dir).Because(err)
	}
	entries = visible(entries)
	sort.Slice(entries, func(i, j int) bool {
		if di, dj := entries[i].IsDir(), entries[j].IsDir(); di != dj {
			return di
		}
		return strings.ToLower(entries[i].Name()) < strings.ToLower(entries[j].Name())
	})
	for i, e := range entries {
		if i == treeMaxEntries {
			fmt.Fprintf(b, "%s... and %d more items\n", prefix, len(entries)-treeMaxEntries)
			break
		}
		last := i == len(entries)-1
		conn, child := "├── ", "│   "
		if last {
			conn, child = "└── ", "    "
		}
		switch {
		case core.ProtectedReason(z, e.Name()) != "":
			slash := ""
			if e.IsDir() {
				slash = "/"
			}
			fmt.Fprintf(b, "%s%s%s%s %s\n", prefix, conn, e.Name(), slash, protectedMark)
		case e.Mode()&os.ModeSymlink != 0:
			fmt.Fprintf(b, "%s%s%s@ (symlink)\n", prefix, conn, e.Name())
		case e.IsDir():
			fmt.Fprintf(b, "%s%s%s/\n", prefix, conn, e.Name())
			if depth > 1 {
				if _, err := s.renderTree(z, path.Join(dir, e.Name()), prefix+child, depth-1, b); err != nil {
					return false, err
				}
			}
		default:
			fmt.Fprintf(b, "%s%s%s (%s)\n", prefix, conn, e.Name(), shortSize(e.Size()))
		}
	}
	return len(entries) == 0, nil
}

// protectedMark follows a protected name in the tree.
const protectedMark = "(protected: never committed nor downloaded)"

// visible drops fileshed's temporary files (writes in flight, never shipped) from the
// entries.
func visible(entries []os.FileInfo) []os.FileInfo {
	out := entries[:0]
	for _, e := range entries {
		if !confine.IsTempName(e.Name()) {
			out = append(out, e)
		}
	}
	return out
}

// shortSize renders a size as the original's tree does: 1.5M, 2.0K, 12B.
func shortSize(n int64) string {
	switch {
	case n > 1<<20:
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	case n > 1<<10:
		return fmt.Sprintf("%.1fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
