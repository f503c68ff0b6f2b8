package links

import (
	"archive/zip"
	"context"
	"io"
	"path"
	"sort"
)

// WriteZip streams the folder being shown as a zip archive to w, entry by entry: no
// temporary file, memory independent of the folder's size. Symlinks and special files are
// skipped, never followed; files are opened without following a final symlink, so a swap
// during the walk cannot pull in anything else.
func (t *LinkTarget) WriteZip(ctx context.Context, w io.Writer) error {
	zw := zip.NewWriter(w)
	// Why flush early: the download should start at once (the browser shows progress, a
	// proxy keeps the connection alive), not when the first 4 KiB of output are ready.
	if err := zw.Flush(); err != nil {
		return err
	}
	if f, ok := w.(interface{ Flush() }); ok {
		f.Flush()
	}
	if err := t.zipDir(ctx, zw, t.Sub, ""); err != nil {
		return err
	}
	return zw.Close()
}

// zipDir adds the content of the folder dir (below the link) under the archive prefix.
func (t *LinkTarget) zipDir(ctx context.Context, zw *zip.Writer, dir, prefix string) error {
	f, err := t.Dir.Open(dir)
	if err != nil {
		return err
	}
	infos, err := f.Readdir(-1)
	_ = f.Close()
	if err != nil {
		return err
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name() < infos[j].Name() })
	for _, fi := range infos {
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, name := path.Join(dir, fi.Name()), prefix+fi.Name()
		switch {
		case fi.IsDir():
			if _, err := zw.Create(name + "/"); err != nil {
				return err
			}
			if err := t.zipDir(ctx, zw, rel, name+"/"); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if err := t.zipFile(zw, rel, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// zipFile adds one regular file; a file that vanished or changed type meanwhile is skipped.
func (t *LinkTarget) zipFile(zw *zip.Writer, rel, name string) error {
	f, info, err := openNoBlock(t.Dir, rel, false)
	if err != nil {
		return nil
	}
	defer f.Close()
	if !info.Mode().IsRegular() {
		return nil
	}
	h, err := zip.FileInfoHeader(info)
	if err != nil {
		return err
	}
	h.Name, h.Method = name, zip.Deflate
	h.SetMode(0o600)
	out, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, f)
	return err
}
