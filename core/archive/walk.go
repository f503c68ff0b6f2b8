package archive

import (
	"context"
	"io/fs"
	"strings"
)

// Walker receives what Walk finds; a nil func is not called.
type Walker struct {
	// File is a regular file.
	File func(path, name string, d fs.DirEntry) error
	// Dir is a folder, before its content.
	Dir func(path, name string) error
	// DirDone is a folder after its content, with whether a file lies anywhere below it.
	DirDone func(path, name string, hasFile bool) error
	// Skip is a path left out, and why (a folder's content is then not visited).
	Skip func(Skipped)
}

// portable is the name check of the files put in an archive: any name Open would accept
// (no backslash, control character or invalid UTF-8), with no limit on depth or length.
var portable = Limits{MaxDepth: 1 << 20, MaxNameLength: 1 << 20}

// Walk visits src (a clean path in fsys, "" or "." for its root) depth first, each folder
// in name order, never following a symlink: regular files and folders go to w; symlinks,
// special files, names another system could not read and the paths skip names are
// skipped. Entries are named relative to base, src or a folder above it (src itself is an
// entry unless it is base). It holds the listing of each folder on the current path
// (fs.WalkDir), never the tree: an archive of any number of files is planned and written
// in memory independent of their count (issue 24).
func Walk(ctx context.Context, fsys fs.FS, src, base string, skip Exclude, w Walker) error {
	if src == "" {
		src = "."
	}
	type open struct {
		path, name string
		hasFile    bool
	}
	var stack []open // the folders on the current path
	// leave finishes the folders of the stack that fp is not inside.
	leave := func(fp string) error {
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			if fp != "" && (top.path == "." || strings.HasPrefix(fp, top.path+"/")) {
				return nil
			}
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && top.hasFile {
				stack[len(stack)-1].hasFile = true
			}
			if top.name != "" && w.DirDone != nil {
				if err := w.DirDone(top.path, top.name, top.hasFile); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := fs.WalkDir(fsys, src, func(fp string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err := leave(fp); err != nil {
			return err
		}
		name := fp
		switch {
		case fp == base:
			name = ""
		case base != ".":
			name = strings.TrimPrefix(fp, base+"/")
		}
		if fp != "." {
			reason := ""
			if c, err := cleanName(fp, portable); err != nil || c != fp {
				reason = "the name is not portable (backslash, control character, invalid UTF-8 or not NFC)"
			} else {
				reason = skipReason(skip, fp)
			}
			if reason != "" {
				if w.Skip != nil {
					w.Skip(Skipped{fp, reason})
				}
				return skipDir(d)
			}
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			if w.Skip != nil {
				w.Skip(Skipped{fp, "symlink: not followed, not stored"})
			}
		case d.IsDir():
			stack = append(stack, open{path: fp, name: name})
			if name != "" && w.Dir != nil {
				return w.Dir(fp, name)
			}
		case t.IsRegular():
			if len(stack) > 0 {
				stack[len(stack)-1].hasFile = true
			}
			if w.File != nil {
				return w.File(fp, name, d)
			}
		default:
			if w.Skip != nil {
				w.Skip(Skipped{fp, "special file (device, pipe or socket): not stored"})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return leave("")
}

func skipDir(d fs.DirEntry) error {
	if d.IsDir() {
		return fs.SkipDir
	}
	return nil
}
