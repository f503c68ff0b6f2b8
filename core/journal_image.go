package core

import (
	"bytes"
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

	"github.com/spf13/afero"

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
	// root is the area as the service keeps it open (journal_area.go); nil when this one
	// was opened for the caller alone, and Close closes it.
	root *areaRoot
}

// openArea opens the journal area of z's owner, sealed like z (Close it): the one the
// service keeps open for the owner (openRoot).
func (s *Service) openArea(z *Zone) (*imageArea, error) {
	root, fsys, err := s.openRoot(s.Layout().JournalArea(z.Owner.ID))
	if err != nil {
		return nil, err
	}
	if root != nil {
		fsys = root.fs.Raw() // the shared root, with z's seal for this caller alone
	}
	fsys.ShareSeal(z.fs)
	return &imageArea{fs: fsys, sealed: z.fs.Sealed(), root: root}, nil
}

// Close releases the area (the service's open root stays open).
func (a *imageArea) Close() {
	if a.root == nil {
		_ = a.fs.Close()
	}
}

// objectPath is where the object name lives.
func objectPath(name string) string {
	if _, err := hex.DecodeString(name); err != nil || len(name) != 64 {
		return "objects/invalid" // a damaged row names no file outside the objects
	}
	return path.Join("objects", name[:2], name)
}

// mkdir makes the folder dir of the area (0700) unless it was made or seen already.
func (a *imageArea) mkdir(dir string) error {
	if a.root != nil {
		if _, ok := a.root.dirs.Load(dir); ok {
			return nil
		}
	}
	if err := a.fs.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if a.root != nil {
		a.root.dirs.Store(dir, true)
	}
	return nil
}

// putBytes keeps b, a file's whole content already read, as an object: hashed in memory,
// not written again when the area holds that content already (unsealed: an object of the
// same size, as one cut short by a crash is not), else written straight under its name
// (created, never replaced: put's temporary file and rename when the name is taken).
func (a *imageArea) putBytes(b []byte) (string, int64, error) {
	var name string
	if a.sealed {
		var r [32]byte
		_, _ = rand.Read(r[:]) // never fails (crypto/rand)
		name = hex.EncodeToString(r[:])
	} else {
		sum := sha256.Sum256(b)
		name = hex.EncodeToString(sum[:])
		if fi, err := a.fs.Raw().Stat(objectPath(name)); err == nil && fi.Size() == int64(len(b)) {
			return name, fi.Size(), nil
		}
	}
	final := objectPath(name)
	if err := a.mkdir(path.Dir(final)); err != nil {
		return "", 0, err
	}
	create := func() (afero.File, error) {
		return a.fs.OpenFile(final, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	}
	f, err := create()
	if errors.Is(err, fs.ErrNotExist) && a.root != nil { // made once, removed since: make it again
		a.root.dirs.Delete(path.Dir(final))
		if err = a.mkdir(path.Dir(final)); err == nil {
			f, err = create()
		}
	}
	if err != nil {
		return a.put(bytes.NewReader(b)) // taken (cut short, or being written): replaced whole
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = a.fs.Remove(final)
		return "", 0, err
	}
	if !a.sealed {
		return name, int64(len(b)), nil
	}
	fi, err := a.fs.Raw().Stat(final)
	if err != nil {
		return "", 0, err
	}
	return name, fi.Size(), nil
}

// put writes r as an object and returns its name and the bytes it holds on disk.
func (a *imageArea) put(r io.Reader) (string, int64, error) {
	tmp, release := confine.HoldTemp()
	defer release()
	if err := a.mkdir("objects"); err != nil {
		return "", 0, err
	}
	f, err := a.fs.OpenFile(path.Join("objects", tmp), os.O_CREATE|os.O_WRONLY|os.O_EXCL|os.O_TRUNC, 0o600)
	if errors.Is(err, fs.ErrNotExist) && a.root != nil { // made once, removed since: make it again
		a.root.dirs.Delete("objects")
		if err = a.mkdir("objects"); err == nil {
			f, err = a.fs.OpenFile(path.Join("objects", tmp), os.O_CREATE|os.O_WRONLY|os.O_EXCL|os.O_TRUNC, 0o600)
		}
	}
	if err != nil {
		return "", 0, err
	}
	var h hash.Hash = sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
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
	if err := a.mkdir(path.Dir(final)); err != nil {
		_ = a.fs.Remove(path.Join("objects", tmp))
		return "", 0, err
	}
	if fi, err := a.fs.Raw().Stat(final); err == nil && !a.sealed && fi.Size() == n {
		_ = a.fs.Remove(path.Join("objects", tmp)) // the same content is kept already
		return name, fi.Size(), nil
	}
	err = a.fs.Rename(path.Join("objects", tmp), final)
	if errors.Is(err, fs.ErrNotExist) && a.root != nil { // made once, removed since: make it again
		a.root.dirs.Delete(path.Dir(final))
		if err = a.mkdir(path.Dir(final)); err == nil {
			err = a.fs.Rename(path.Join("objects", tmp), final)
		}
	}
	if err != nil {
		_ = a.fs.Remove(path.Join("objects", tmp))
		return "", 0, err
	}
	if !a.sealed {
		return name, n, nil // the bytes as written
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
//
// content is the file's whole plaintext when the caller read it already (nil: read here);
// it is used only when rel is a regular file itself, not a link to one.
func (a *imageArea) keepImage(z *Zone, rel string, limit int64, content []byte) (string, int64, error) {
	fi, _, err := z.fs.LstatIfPossible(rel)
	if err != nil {
		return "", 0, err
	}
	if fi.Mode().IsRegular() {
		if fi.Size() > limit {
			return "", 0, errImageTooLarge
		}
		var name string
		var n int64
		if content != nil && int64(len(content)) == fi.Size() {
			name, n, err = a.putBytes(content)
		} else {
			name, n, err = a.putFile(z, rel)
		}
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
