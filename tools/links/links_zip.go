package links

import (
	"context"
	"io"
	"io/fs"
	"time"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/archive"
)

// LinkZipSlot takes a command slot for the zip of a folder link, as its creator's (whose
// files and share of the server they are): anyone holding the link can ask for it, so
// it is bounded like the commands the creator runs (issue 24). TOO_MANY_COMMANDS when no
// slot frees in time; release the slot once.
func (s *Tools) LinkZipSlot(ctx context.Context, t *LinkTarget) (release func(), err error) {
	return s.AcquireSlot(ctx, t.Link.Owner, core.ZipSlot)
}

// WriteZip streams the folder being shown as a zip archive to w, entry by entry: no
// temporary file, and memory independent of the folder's size but for the archive's
// central directory (archive.Walk). Symlinks, special files, protected names and names
// another system could not read are skipped, never followed; files are opened without following a final
// symlink, so a swap during the walk cannot pull in anything else. The caller holds a
// slot (LinkZipSlot).
func (t *LinkTarget) WriteZip(ctx context.Context, w io.Writer) error {
	zw := archive.NewWriter(w)
	// Why flush early: the download should start at once (the browser shows progress, a
	// proxy keeps the connection alive), not when the first 4 KiB of output are ready.
	if err := zw.Flush(); err != nil {
		return err
	}
	if f, ok := w.(interface{ Flush() }); ok {
		f.Flush()
	}
	root := t.Sub
	if root == "" {
		root = "."
	}
	// Protected names (a .git in a versioned zone, fileshed's temporary files) are never
	// shipped: git in the unpacked folder would run what a .git/config there says.
	skip := func(p string) string { return core.ProtectedReason(t.zone, p) }
	err := archive.Walk(ctx, afero.NewIOFS(t.Dir.Afero()), root, root, skip, archive.Walker{
		Dir:  func(_, name string) error { return zw.Dir(name+"/", time.Time{}, 0o700) },
		File: func(p, name string, _ fs.DirEntry) error { return t.zipFile(zw, p, name) },
	})
	if err != nil {
		return err
	}
	return zw.Close()
}

// zipFile adds one regular file; a file that vanished or changed type meanwhile is skipped.
func (t *LinkTarget) zipFile(zw *archive.Writer, rel, name string) error {
	f, info, err := openNoBlock(t.Dir, rel, false)
	if err != nil {
		return nil
	}
	defer f.Close()
	if !info.Mode().IsRegular() {
		return nil
	}
	out, err := zw.File(name, info.ModTime(), 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, f)
	return err
}
