package sqlite

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fileshed/fileshed/core"
)

// dbFile is the database of one call, confined and checked.
type dbFile struct {
	z      *core.Zone
	rel    string
	shown  string
	host   string
	before fileState
	// roErr, when set, opens the database read-only and is the answer to a write.
	roErr *core.Error
	table string // of an import, for messages
	bulk  bool   // an import: one big transaction
	// m is the decrypted copy of the database and its journals in an encrypted zone:
	// host names it, and what a write changed goes back encrypted.
	m *core.Mirror
}

// decrypt gives the database of an encrypted zone, with its journals, a decrypted copy
// that d.host then names. A writer calls it under the file's write lock: a copy taken before
// would miss what the writer ahead of it commits.
func (s *Tools) decrypt(d *dbFile) error {
	if !d.z.Fs().Sealed() || d.m != nil {
		return nil
	}
	names := []string{d.rel}
	for _, j := range core.Journals {
		names = append(names, d.rel+j)
	}
	m, err := s.OpenMirror(d.z.Fs(), names)
	if err != nil {
		return err
	}
	d.m, d.host = m, filepath.Join(m.Dir, filepath.FromSlash(d.rel))
	d.before = d.state()
	return nil
}

// close removes the decrypted copy (if any) and closes the zone.
func (d *dbFile) close() {
	if d.m != nil {
		d.m.Remove()
	}
	d.z.Close()
}

// fileState is what a call measures of the database and its journals.
type fileState struct {
	exists bool
	size   int64 // the database file
	extra  int64 // -wal and -journal
	names  int64 // the database and its journals that exist (the file quota)
	mtime  time.Time
}

// sqliteFile resolves and checks the database path: inside the zone, not a symlink, a
// regular file (or missing), its journals regular files too, and SQLite content.
func (s *Tools) sqliteFile(ctx context.Context, c core.Caller, in SQLiteInput) (*dbFile, error) {
	z, rel, err := s.ZonePath(ctx, c, in.ZoneArgs, in.Path, false)
	if err != nil {
		return nil, err
	}
	d := &dbFile{z: z, rel: rel, shown: in.Path}
	if err := d.check(); err != nil {
		z.Close()
		return nil, err
	}
	return d, nil
}

func (d *dbFile) check() error {
	z, rel, shown := d.z, d.rel, d.shown
	if rel == "" {
		return core.Errf(core.NotAFile, "Path is a directory, not a file: %s", shown).With("path", shown).With("zone", z.Label)
	}
	if _, err := z.Fs().Confined(rel); err != nil {
		return core.WriteError(err, z, shown)
	}
	for _, suffix := range append([]string{""}, core.Journals...) {
		fi, _, err := z.Fs().LstatIfPossible(rel + suffix)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return core.WriteError(err, z, shown)
		case fi.Mode()&fs.ModeSymlink != 0:
			return core.Errf(core.InvalidPath, "The database %s is a symbolic link", shown+suffix).With("path", shown).With("zone", z.Label).
				WithHint("Open the database file itself, not a link to it")
		case fi.IsDir():
			return core.Errf(core.NotAFile, "Path is a directory, not a file: %s", shown+suffix).With("path", shown).With("zone", z.Label)
		case !fi.Mode().IsRegular():
			return core.Errf(core.NotAFile, "Not a regular file: %s (%s)", shown+suffix, core.FileKind(fi.Mode())).With("path", shown).With("zone", z.Label).
				WithHint("A database must be a regular file; see shed_tree")
		}
	}
	d.host = filepath.Join(z.Fs().Dir(), filepath.FromSlash(rel))
	d.before = d.state()
	if d.before.exists && d.before.size > 0 {
		f, _, err := core.OpenRegular(z, rel, shown, func(*core.Zone, string) error { return nil })
		if err != nil {
			return err
		}
		head := make([]byte, 16)
		n, _ := io.ReadFull(f, head)
		_ = f.Close()
		if string(head[:n]) != core.SqliteMagic {
			return core.Errf(core.ExecError, "SQLite query failed: file is not a database: %s", shown).With("path", shown).With("zone", z.Label).
				WithHint(notADatabaseHint)
		}
	}
	return nil
}

// notItself refuses a CSV path (param) that is the database or one of its journals.
func (d *dbFile) notItself(rel, param string) error {
	for _, suffix := range append([]string{""}, core.Journals...) {
		if rel == d.rel+suffix {
			return core.Errf(core.InvalidParameter, "'%s' is the database itself: %s", param, rel).With("parameter", param).
				WithHint("Use another file name for the CSV, e.g. 'export.csv'")
		}
	}
	return nil
}

// state measures the database and its journals now.
func (d *dbFile) state() fileState {
	var st fileState
	if fi, err := os.Lstat(d.host); err == nil {
		st.exists, st.size, st.mtime, st.names = true, fi.Size(), fi.ModTime(), 1
	}
	for _, j := range core.Journals {
		fi, err := os.Lstat(d.host + j)
		if err != nil {
			continue
		}
		st.names++
		if j != "-shm" && fi.Mode().IsRegular() {
			st.extra += fi.Size()
		}
	}
	return st
}

// exists reports whether a host path exists (without following a final symlink).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// changed reports whether the database file differs from the start of the call.
func (d *dbFile) changed(now fileState) bool {
	b := d.before
	return now.exists != b.exists || now.size != b.size || !now.mtime.Equal(b.mtime)
}
