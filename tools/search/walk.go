package search

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/confine"
)

// The walk lists a zone in a stable order (depth first, names sorted bytewise) so that an
// offset names the same match on every call while the zone is unchanged. It reads each
// folder once with the types its listing gives (no stat per name), never follows a symbolic
// link (a link is counted, never named nor read), leaves out fileshed's temporary files and
// the protected names (.git in a versioned zone), and prunes the folders a glob cannot reach.

// scope narrows a search to a folder or file of each zone (root) and, for a glob, to the
// paths its segments match: a glob of one segment ("*.md") matches names at any depth,
// longer ones match the path from root ("docs/*/report.md"), "**" any number of folders.
type scope struct {
	root string
	glob []string
	// name: the glob is one segment matched against names at any depth.
	name bool
}

// newScope parses the path argument (already clean).
func newScope(clean string) (scope, error) {
	if !strings.ContainsAny(clean, "*?[") {
		return scope{root: clean}, nil
	}
	parts := strings.Split(clean, "/")
	i := slices.IndexFunc(parts, func(p string) bool { return strings.ContainsAny(p, "*?[") })
	sc := scope{root: strings.Join(parts[:i], "/"), glob: parts[i:]}
	for _, g := range sc.glob {
		if _, err := path.Match(g, ""); err != nil {
			return scope{}, core.Errf(core.InvalidParameter, "Invalid glob in path: %s", clean).With("path", clean).
				WithHint("Use a folder ('docs'), or a glob: '*.md' (names at any depth), 'docs/*.txt', 'docs/**/*.pdf'")
		}
	}
	sc.name = i == 0 && len(parts) == 1
	return sc, nil
}

// matches reports whether rel (below root) is in scope.
func (sc scope) matches(rel string) bool {
	if sc.glob == nil {
		return true
	}
	if sc.name {
		ok, _ := path.Match(sc.glob[0], path.Base(rel))
		return ok
	}
	return globMatch(sc.glob, strings.Split(sc.below(rel), "/"), false)
}

// reaches reports whether some path below the folder rel may be in scope.
func (sc scope) reaches(dir string) bool {
	if sc.glob == nil || sc.name || dir == sc.root {
		return true
	}
	return globMatch(sc.glob, strings.Split(sc.below(dir), "/"), true)
}

// below is rel relative to root.
func (sc scope) below(rel string) string {
	if sc.root == "" {
		return rel
	}
	return strings.TrimPrefix(rel, sc.root+"/")
}

// globMatch matches path segments against glob segments ("**": any number of them);
// prefix accepts parts that some longer path could complete.
func globMatch(glob, parts []string, prefix bool) bool {
	for len(glob) > 0 {
		if glob[0] == "**" {
			for i := 0; i <= len(parts); i++ {
				if globMatch(glob[1:], parts[i:], prefix) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return prefix
		}
		if ok, _ := path.Match(glob[0], parts[0]); !ok {
			return false
		}
		glob, parts = glob[1:], parts[1:]
	}
	return len(parts) == 0
}

// entry is one name of the walk: a regular file, a folder (only its name is matched), or
// what the search counts without reading it (a symbolic link, a folder it cannot list).
type entry struct {
	rel  string
	kind entryKind
}

// entryKind is the kind of an entry of the walk.
type entryKind int

const (
	fileEntry entryKind = iota
	dirEntry
	linkEntry
	unlistedEntry
)

// errNoRoot is the walk of a zone where the scope's root does not exist.
var errNoRoot = errors.New("no such path")

// walk calls emit for every entry of z in scope, in order; an error of emit ends it.
func walk(ctx context.Context, z *core.Zone, sc scope, emit func(entry) error) error {
	if sc.root != "" {
		fi, _, err := z.Fs().LstatIfPossible(sc.root)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return errNoRoot
		case err != nil:
			return core.PathNotFound(err, z, sc.root)
		case fi.Mode()&os.ModeSymlink != 0:
			return emit(entry{rel: sc.root, kind: linkEntry})
		case fi.Mode().IsRegular():
			if sc.matches(sc.root) {
				return emit(entry{rel: sc.root})
			}
			return nil
		case !fi.IsDir():
			return nil
		}
	}
	return walkDir(ctx, z, sc, sc.root, emit)
}

// readDirer lists a folder with the entries' types from the listing itself.
type readDirer interface {
	ReadDir(n int) ([]fs.DirEntry, error)
}

func walkDir(ctx context.Context, z *core.Zone, sc scope, dir string, emit func(entry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := z.Fs().Open(dir)
	if err != nil {
		return emit(entry{rel: dir, kind: unlistedEntry})
	}
	rd, ok := f.(readDirer)
	var ents []fs.DirEntry
	if ok {
		ents, err = rd.ReadDir(-1)
	}
	_ = f.Close()
	if !ok || err != nil {
		return emit(entry{rel: dir, kind: unlistedEntry})
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range ents {
		rel := path.Join(dir, e.Name())
		t := e.Type()
		switch {
		case confine.IsTempName(e.Name()) || core.ProtectedReason(z, rel) != "":
		case t&fs.ModeSymlink != 0:
			if err := emit(entry{rel: rel, kind: linkEntry}); err != nil {
				return err
			}
		case t.IsDir():
			if sc.matches(rel) {
				if err := emit(entry{rel: rel, kind: dirEntry}); err != nil {
					return err
				}
			}
			if sc.reaches(rel) {
				if err := walkDir(ctx, z, sc, rel, emit); err != nil {
					return err
				}
			}
		case t.IsRegular():
			if sc.matches(rel) {
				if err := emit(entry{rel: rel}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
