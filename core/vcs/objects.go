package vcs

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

// tmpObjPrefix names the temporary files of writeObject; Open removes
// leftovers of a crash.
const tmpObjPrefix = "tmp_obj_fileshed_"

// objectPath is where the loose object h lives.
func (r *Repo) objectPath(h plumbing.Hash) string {
	s := h.String()
	return filepath.Join(r.gitDir, "objects", s[:2], s[2:])
}

// hasObject reports whether h is stored, loose (one stat) or packed.
func (r *Repo) hasObject(h plumbing.Hash) bool {
	if _, err := os.Stat(r.objectPath(h)); err == nil {
		return true
	}
	return r.st.HasEncodedObject(h) == nil
}

// hashObject computes the id of an object of the given type and size read
// from src, without storing it. A src shorter than size is ErrChanged.
func hashObject(t plumbing.ObjectType, size int64, src io.Reader) (plumbing.Hash, error) {
	h := plumbing.NewHasher(t, size)
	n, err := io.Copy(h, io.LimitReader(src, size))
	if err != nil {
		return plumbing.ZeroHash, scrub(err)
	}
	if n != size {
		return plumbing.ZeroHash, ErrChanged
	}
	return h.Sum(), nil
}

// writeObject stores an object as a loose object and returns its id. The
// data is compressed into a temporary file while it is hashed, then renamed
// into place, so a crash never leaves a truncated object under a valid name.
// Objects are immutable: when h exists already the temporary file is
// dropped. A src shorter than size is ErrChanged.
func (r *Repo) writeObject(t plumbing.ObjectType, size int64, src io.Reader) (plumbing.Hash, error) {
	dir := filepath.Join(r.gitDir, "objects")
	tmp, err := os.CreateTemp(dir, tmpObjPrefix)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write object: %w", scrub(err))
	}
	keep := false
	defer func() {
		if !keep {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	zw, err := zlib.NewWriterLevel(tmp, zlib.BestSpeed)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	hdr := append(append([]byte(t.String()+" "), strconv.FormatInt(size, 10)...), 0)
	if _, err := zw.Write(hdr); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write object: %w", scrub(err))
	}
	h := plumbing.NewHasher(t, size)
	n, err := io.Copy(io.MultiWriter(zw, h), io.LimitReader(src, size))
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write object: %w", scrub(err))
	}
	if n != size {
		return plumbing.ZeroHash, ErrChanged
	}
	if err := zw.Close(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write object: %w", scrub(err))
	}
	if err := tmp.Close(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write object: %w", scrub(err))
	}
	sum := h.Sum()
	if r.hasObject(sum) {
		return sum, nil
	}
	final := r.objectPath(sum)
	if err := os.Mkdir(filepath.Dir(final), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return plumbing.ZeroHash, fmt.Errorf("write object: %w", scrub(err))
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write object: %w", scrub(err))
	}
	keep = true
	return sum, nil
}

// writeBytes stores an in-memory object (tree, commit, symlink target),
// hashing it first so that an existing object costs no temporary file.
func (r *Repo) writeBytes(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h, err := hashObject(t, int64(len(data)), bytes.NewReader(data))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if r.hasObject(h) {
		return h, nil
	}
	return r.writeObject(t, int64(len(data)), bytes.NewReader(data))
}
