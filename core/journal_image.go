package core

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/fileshed/fileshed/core/confine"
)

// Before-images of Storage (issue 36): what a change overwrote or removed, kept in the
// user's journal area (Layout.JournalArea), outside every zone and outside the quota. A
// file's image is an object named by the SHA-256 of its content ("cas:<hex>"), so one
// content kept for several changes is stored once; a folder's (or a link's) is a manifest
// of its entries ("tree:<name>") whose files are objects too. When the zone is encrypted
// the area is sealed with the same key: objects and manifests are written encrypted, and
// named at random rather than by their content (a name derived from the plaintext would let
// anyone holding a guess confirm it). Images are written without fsync: a change's own
// write is durable, its image is kept best-effort across a power loss (admin verify and
// undo check the bytes: a damaged image makes its change undoable: false).

// Image prefixes of a journal row.
const (
	imageGit  = "git"   // the commit's parent, in a versioned zone
	imageCAS  = "cas:"  // one object
	imageTree = "tree:" // a manifest
)

// treeEntry is one entry of a manifest: its path below the folder ("" = the entry itself),
// its kind (f file, d folder, l link), the object of a file and a link's target.
type treeEntry struct {
	Path   string `json:"p"`
	Kind   string `json:"k"`
	Object string `json:"o,omitempty"`
	Link   string `json:"l,omitempty"`
	Mode   uint32 `json:"m,omitempty"`
}

// imageArea is an open journal area of one user: objects under objects/xx/.
type imageArea struct {
	fs *confine.Fs
	// sealed: written encrypted, named at random.
	sealed bool
}

// openArea opens the journal area of z's owner, sealed like z (Close it).
func (s *Service) openArea(z *Zone) (*imageArea, error) {
	fsys, err := confine.New(s.Layout().JournalArea(z.Owner.ID))
	if err != nil {
		return nil, err
	}
	fsys.ShareSeal(z.fs)
	return &imageArea{fs: fsys, sealed: z.fs.Sealed()}, nil
}

// Close releases the area.
func (a *imageArea) Close() { _ = a.fs.Close() }

// objectPath is where the object name lives.
func objectPath(name string) string {
	if _, err := hex.DecodeString(name); err != nil || len(name) != 64 {
		return "objects/invalid" // a damaged row names no file outside the objects
	}
	return path.Join("objects", name[:2], name)
}

// put writes r as an object and returns its name and the bytes it holds on disk.
func (a *imageArea) put(r io.Reader) (string, int64, error) {
	tmp, release := confine.HoldTemp()
	defer release()
	if err := a.fs.MkdirAll("objects", 0o700); err != nil {
		return "", 0, err
	}
	f, err := a.fs.OpenFile(path.Join("objects", tmp), os.O_CREATE|os.O_WRONLY|os.O_EXCL|os.O_TRUNC, 0o600)
	if err != nil {
		return "", 0, err
	}
	var h hash.Hash = sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = a.fs.Remove(path.Join("objects", tmp))
		return "", 0, err
	}
	name := hex.EncodeToString(h.Sum(nil))
	if a.sealed {
		var b [32]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		name = hex.EncodeToString(b[:])
	}
	final := objectPath(name)
	if err := a.fs.MkdirAll(path.Dir(final), 0o700); err != nil {
		_ = a.fs.Remove(path.Join("objects", tmp))
		return "", 0, err
	}
	if fi, err := a.fs.Raw().Stat(final); err == nil && !a.sealed {
		_ = a.fs.Remove(path.Join("objects", tmp)) // the same content is kept already
		return name, fi.Size(), nil
	}
	if err := a.fs.Rename(path.Join("objects", tmp), final); err != nil {
		_ = a.fs.Remove(path.Join("objects", tmp))
		return "", 0, err
	}
	fi, err := a.fs.Raw().Stat(final)
	if err != nil {
		return "", 0, err
	}
	return name, fi.Size(), nil
}

// open opens the object name (plaintext: decrypted when sealed).
func (a *imageArea) open(name string) (io.ReadCloser, error) { return a.fs.Open(objectPath(name)) }

// errImageTooLarge stops an image over its bound.
var errImageTooLarge = errors.New("larger than journal.max_file_mb")

// keepImage keeps the before-image of rel in z: an object for a regular file, a manifest
// for a folder or a link. limit bounds the bytes of the files kept (journal.max_file_mb,
// for one file or a whole folder). It returns the image and the bytes it holds.
func (a *imageArea) keepImage(z *Zone, rel string, limit int64) (string, int64, error) {
	fi, _, err := z.fs.LstatIfPossible(rel)
	if err != nil {
		return "", 0, err
	}
	if fi.Mode().IsRegular() {
		if fi.Size() > limit {
			return "", 0, errImageTooLarge
		}
		name, n, err := a.putFile(z, rel)
		return imageCAS + name, n, err
	}
	var entries []treeEntry
	var total, kept int64
	var walk func(rel, below string) error
	walk = func(rel, below string) error {
		fi, _, err := z.fs.LstatIfPossible(rel)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := z.fs.ReadlinkIfPossible(rel)
			if err != nil {
				return err
			}
			entries = append(entries, treeEntry{Path: below, Kind: "l", Link: target})
		case fi.IsDir():
			entries = append(entries, treeEntry{Path: below, Kind: "d"})
			f, err := z.fs.Open(rel)
			if err != nil {
				return err
			}
			names, err := f.Readdirnames(-1)
			_ = f.Close()
			if err != nil {
				return err
			}
			for _, n := range names {
				if confine.IsTempName(n) {
					continue
				}
				if err := walk(path.Join(rel, n), path.Join(below, n)); err != nil {
					return err
				}
			}
		case fi.Mode().IsRegular():
			if total += fi.Size(); total > limit {
				return errImageTooLarge
			}
			name, n, err := a.putFile(z, rel)
			if err != nil {
				return err
			}
			kept += n
			entries = append(entries, treeEntry{Path: below, Kind: "f", Object: name, Mode: uint32(fi.Mode().Perm())})
		}
		return nil
	}
	if err := walk(rel, ""); err != nil {
		return "", 0, err
	}
	b, err := json.Marshal(entries)
	if err != nil {
		return "", 0, err
	}
	name, n, err := a.put(strings.NewReader(string(b)))
	return imageTree + name, kept + n, err
}

// putFile keeps the file rel of z as an object (read through z: plaintext, sealed again by
// the area when z is sealed).
func (a *imageArea) putFile(z *Zone, rel string) (string, int64, error) {
	f, err := z.fs.Open(rel)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	return a.put(f)
}

// manifest reads the manifest name.
func (a *imageArea) manifest(name string) ([]treeEntry, error) {
	r, err := a.open(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var entries []treeEntry
	if err := json.NewDecoder(io.LimitReader(r, 64<<20)).Decode(&entries); err != nil {
		return nil, fmt.Errorf("journal manifest %s: %w", name, err)
	}
	return entries, nil
}

// remove removes the object name (eviction).
func (a *imageArea) remove(name string) error {
	err := a.fs.Remove(objectPath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
