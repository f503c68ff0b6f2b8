package admin

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the original's access_auth.sqlite is read with the same driver as the state

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// ownershipDB is the original's own database: group file ownership and the (unused in
// practice) encryption keys (reference §2.10).
const ownershipDB = "access_auth.sqlite"

// originalRecord is one row of the original's file_ownership table.
type originalRecord struct {
	group, path, owner, mode string
	created                  time.Time
}

// ownership imports the file_ownership table of the original into the staged state
// database: one record per file of an imported group, its owner and mode kept. A record is
// dropped, and reported, when its group was not imported, its path is not a valid path,
// its file does not exist (the original never cleaned those up after commands), or its
// owner or mode is not one fileshed can hold.
func (im *importer) ownership(ctx context.Context) error {
	fi, err := im.src.Lstat(ownershipDB)
	if errors.Is(err, fs.ErrNotExist) {
		for _, o := range im.rep.owners {
			if o.kind == "group" {
				im.rep.note("no %s: group files have no owner (every member may write them)", ownershipDB)
				break
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		// Why fail: without the table every group file becomes writable by every member.
		return fmt.Errorf("%s is not a regular file (a symlink is never followed): the group files' owners cannot be imported", ownershipDB)
	}
	// The database is read from a copy with its journal: opening the original, even
	// read-only, may write its -shm file or roll back a journal, and it must stay untouched.
	dir := filepath.Join(im.staging, "original")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, name := range []string{ownershipDB, ownershipDB + "-wal", ownershipDB + "-journal"} {
		if _, err := im.src.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		in, _, err := im.openRegular(name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		_, err = writeNew(filepath.Join(dir, name), in, 0o600)
		in.Close()
		if err != nil {
			return err
		}
	}
	records, keys, err := readOriginal(ctx, filepath.Join(dir, ownershipDB))
	if err != nil {
		return fmt.Errorf("%s: %w", ownershipDB, err)
	}
	if keys > 0 {
		im.rep.note("%s: %d user(s) had set up the original's encryption: keys are not imported (fileshed's encryption is its own: shed_encryption)", ownershipDB, keys)
	}
	db, err := store.Open(filepath.Join(im.staging, "fileshed.sqlite"))
	if err != nil {
		return err
	}
	defer db.Close()
	dropped := map[string][]string{}
	zones := map[string]*confine.Fs{}
	defer func() {
		for _, z := range zones {
			z.Close()
		}
	}()
	for _, r := range records {
		o := im.rep.group(r.group)
		if o == nil {
			im.rep.note("%s: ownership record of %q in group %q dropped: the group was not imported", ownershipDB, shortText(r.path), shortText(r.group))
			continue
		}
		if zones[r.group] == nil {
			if zones[r.group], err = confine.New(filepath.Join(im.staging, "groups", r.group, "data")); err != nil {
				return err
			}
		}
		key, why := recordKey(zones[r.group], r)
		if why != "" {
			dropped[r.group] = append(dropped[r.group], fmt.Sprintf("%q (%s)", shortText(r.path), why))
			continue
		}
		if err := db.SetOwnership(ctx, store.Ownership{GroupID: r.group, Path: key, Owner: r.owner, Mode: r.mode, Created: r.created}); err != nil {
			return err
		}
		o.ownership++
	}
	for _, o := range im.rep.owners {
		if d := dropped[o.id]; o.kind == "group" && len(d) > 0 {
			o.note("%d ownership record(s) dropped: %s", len(d), strings.Join(d, ", "))
		}
	}
	return nil
}

// recordKey checks one record against its staged group zone and returns its key (the path
// as fileshed's tools name it), or why it is dropped.
func recordKey(zone *confine.Fs, r originalRecord) (key, why string) {
	key, err := confine.Clean(r.path)
	switch {
	case err != nil || key == "":
		return "", "not a valid path"
	case r.mode != "owner" && r.mode != "group" && r.mode != "owner_ro":
		return "", fmt.Sprintf("mode %q", shortText(r.mode))
	case !core.ValidID(r.owner):
		return "", fmt.Sprintf("owner %q is not a valid user id", shortText(r.owner))
	}
	if _, _, err := zone.LstatIfPossible(key); err != nil {
		return "", "no such file"
	}
	return key, ""
}

// readOriginal reads the file_ownership rows and counts the user_encryption rows of the
// original's database (a copy). The database is the original's users' work, so it is read
// as untrusted: no schema-defined function runs (trusted_schema off), nothing is written.
func readOriginal(ctx context.Context, file string) ([]originalRecord, int, error) {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(file)}
	q := url.Values{}
	q.Add("_pragma", "trusted_schema(0)")
	q.Add("_pragma", "query_only(1)")
	u.RawQuery = q.Encode()
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, 0, err
	}
	defer db.Close()
	tables := map[string]bool{}
	names, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, 0, err // not a database, or a damaged one: never "no records"
	}
	for names.Next() {
		var name string
		if err := names.Scan(&name); err != nil {
			names.Close()
			return nil, 0, err
		}
		tables[name] = true
	}
	names.Close()
	if err := names.Err(); err != nil {
		return nil, 0, err
	}
	var records []originalRecord
	if tables["file_ownership"] {
		rows, err := db.QueryContext(ctx, `SELECT group_id, file_path, owner_id, write_access, created_at FROM file_ownership ORDER BY id`)
		if err != nil {
			return nil, 0, err
		}
		defer rows.Close()
		for rows.Next() {
			var g, p, o, m, c sql.NullString
			if err := rows.Scan(&g, &p, &o, &m, &c); err != nil {
				return nil, 0, err
			}
			created, _ := time.Parse(time.DateTime, c.String) // SQLite's CURRENT_TIMESTAMP, UTC
			records = append(records, originalRecord{group: g.String, path: p.String, owner: o.String, mode: m.String, created: created})
		}
		if err := rows.Err(); err != nil {
			return nil, 0, err
		}
	}
	keys := 0
	if tables["user_encryption"] {
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM user_encryption`).Scan(&keys); err != nil {
			return nil, 0, err
		}
	}
	return records, keys, nil
}
