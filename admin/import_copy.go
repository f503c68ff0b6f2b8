package admin

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"syscall"
)

// originalMagic starts every file the original encrypted (reference §2.11): AES-GCM under a
// key only its user had, in a format fileshed does not read.
var originalMagic = []byte("FILESHED_ENC_V1\x00")

// file copies the regular file rel of the zone to dst: private (0600, the owner's execute
// bit kept so git sees the same mode), with its modification time. A file the
// original encrypted is left out and reported by name: copied, it would read as garbage
// and be served as if it were the file. A file over max_file_size_mb is copied and reported
// (the tools refuse to make it bigger, and reading it works as before).
func (z *zoneCopy) file(rel, dst string) error {
	src := path.Join(z.src, rel)
	in, fi, err := z.im.openRegular(src)
	if err != nil {
		return err
	}
	defer in.Close()
	head := make([]byte, len(originalMagic))
	n, err := io.ReadFull(in, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	if bytes.Equal(head[:n], originalMagic) {
		z.o.note("%s: encrypted by the original (FILESHED_ENC_V1): not imported (decrypt it with the original first)", src)
		return nil
	}
	if max := int64(z.im.cfg.MaxFileSizeMB) << 20; fi.Size() > max {
		z.o.note("%s: %d bytes, over max_file_size_mb (%d): imported; the tools refuse to make it bigger", src, fi.Size(), z.im.cfg.MaxFileSizeMB)
	}
	written, err := writeNew(dst, io.MultiReader(bytes.NewReader(head[:n]), in), 0o600|fi.Mode().Perm()&0o100)
	if err != nil {
		return err
	}
	z.files++
	z.bytes += written
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 { // settled when the zone is copied
		h := z.links[st.Ino]
		if h == nil {
			h = &hardlink{nlink: uint64(st.Nlink), bytes: written}
			z.links[st.Ino] = h
		}
		h.copies, h.dsts = append(h.copies, rel), append(h.dsts, dst)
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// openRegular opens the regular file rel of the original for reading, and fails when it is
// not (or no longer) the regular file its folder listed.
func (im *importer) openRegular(rel string) (*os.File, os.FileInfo, error) {
	before, err := im.src.Lstat(rel)
	if err != nil {
		return nil, nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, nil, errors.New("not a regular file")
	}
	// Why O_NOFOLLOW and O_NONBLOCK: if the entry became a link or a FIFO since it was
	// listed, the open fails or does not block, and SameFile below notices.
	in, err := im.src.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := in.Stat()
	if err == nil && (!fi.Mode().IsRegular() || !os.SameFile(before, fi)) {
		err = errors.New("changed while being imported (stop the original's Open WebUI first)")
	}
	if err != nil {
		in.Close()
		return nil, nil, err
	}
	return in, fi, nil
}

// writeNew writes r into the new file dst (never an existing one, never through a link)
// with mode perm. It does not sync: the whole staging directory is synced once before it
// is moved into place (importer.install).
func writeNew(dst string, r io.Reader, perm os.FileMode) (int64, error) {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// link recreates the symlink rel (named dstRel in fileshed) when its target stays inside
// the zone by its very text (a relative target that does not climb out of the zone from
// where the link is) and names no protected path. Any other link is reported and left
// out: it is never followed, and fileshed's confinement would refuse it anyway. The
// target follows the names rule, so a link to a renamed file still reaches it.
func (z *zoneCopy) link(rel, dstRel, dst string) error {
	src := path.Join(z.src, rel)
	target, err := z.im.src.Readlink(src)
	if err != nil {
		return err
	}
	if path.IsAbs(target) || !filepath.IsLocal(path.Join(path.Dir(dstRel), target)) {
		z.o.note("%s -> %s: a symlink leaving its zone: not imported (never followed)", src, target)
		return nil
	}
	target = reachablePath(target)
	if why := z.protectedLink(dstRel, target); why != "" {
		z.o.note("%s -> %s: a symlink to a protected name (%s): not imported", src, target, why)
		return nil
	}
	return os.Symlink(target, dst)
}
