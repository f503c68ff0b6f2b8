package admin

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
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
//
// Why a database that is missing or cannot be read stops the import (unless --no-ownership):
// without its records every group file becomes writable by every member, a change no
// report line at the end of a long listing undoes.
func (im *importer) ownership(ctx context.Context) error {
	groups := slices.ContainsFunc(im.rep.owners, func(o *ownerReport) bool { return o.kind == "group" })
	if im.opt.noOwnership {
		if groups {
			im.rep.note("--no-ownership: %s not read: the group files have no owner (every member may write them)", ownershipDB)
		}
		return nil
	}
	fi, err := im.src.Lstat(ownershipDB)
	if errors.Is(err, fs.ErrNotExist) {
		if groups {
			return fmt.Errorf("no %s: the group files' owners cannot be imported%s", ownershipDB, noOwnershipHint)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (a symlink is never followed): the group files' owners cannot be imported%s", ownershipDB, noOwnershipHint)
	}
	// The database is read from a copy with its journal: opening the original, even
	// read-only, may write its -shm file or roll back a journal, and it must stay untouched.
	dir := core.LayoutOf(im.staging).Top("original")
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
		return fmt.Errorf("%s: %w%s", ownershipDB, err, noOwnershipHint)
	}
	if keys > 0 {
		im.rep.note("%s: %d user(s) had set up the original's encryption: keys are not imported (fileshed's encryption is its own: shed_encryption)", ownershipDB, keys)
	}
	db, err := store.Open(core.LayoutOf(im.staging).StateFile())
	if err != nil {
		return err
	}
	defer db.Close()
	dropped := map[string][]string{}
	memberOf := map[string][]string{} // the groups each owner owns a file in
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
			if zones[r.group], err = confine.New(core.DataDir(core.LayoutOf(im.staging).GroupSpace(r.group))); err != nil {
				return err
			}
		}
		key, why := recordKey(zones[r.group], o, r)
		if why != "" {
			dropped[r.group] = append(dropped[r.group], fmt.Sprintf("%q (%s)", shortText(r.path), why))
			continue
		}
		if err := db.SetOwnership(ctx, store.Ownership{GroupID: r.group, Path: key, Owner: r.owner, Mode: r.mode, Created: r.created}); err != nil {
			return err
		}
		o.ownership++
		if !slices.Contains(memberOf[r.owner], r.group) {
			memberOf[r.owner] = append(memberOf[r.owner], r.group)
		}
	}
	if err := im.members(ctx, db, memberOf); err != nil {
		return err
	}
	for _, o := range im.rep.owners {
		if d := dropped[o.id]; o.kind == "group" && len(d) > 0 {
			o.note("%d ownership record(s) dropped: %s", len(d), strings.Join(d, ", "))
		}
	}
	return nil
}

// noOwnershipHint ends a refusal about the ownership database with the way past it.
const noOwnershipHint = "; import with --no-ownership to go without them (every group file then becomes writable by every member)"

// members records every owner of an imported record as a member of the groups it owns files
// in, seen at the import (as if a request of theirs had listed those groups): a file can be
// given to them (shed_group chown) and shed_group info lists them before they make a call.
// They count as members for groups.member_seen_days, or until a request of theirs no longer
// lists the group.
func (im *importer) members(ctx context.Context, db *store.DB, memberOf map[string][]string) error {
	now := time.Now()
	for user, groups := range memberOf {
		if err := db.SeeMembers(ctx, user, "", groups, now); err != nil {
			return err
		}
		for _, g := range groups {
			im.rep.group(g).members++
		}
	}
	return nil
}

// recordKey checks one record against its staged group zone and returns its key (the path
// as fileshed's tools name it: the record follows its file through the names rule), or
// why it is dropped.
func recordKey(zone *confine.Fs, o *ownerReport, r originalRecord) (key, why string) {
	if slices.Contains(o.collided, path.Clean(r.path)) {
		return "", "its file was not imported: its name as the tools can reach it was taken"
	}
	key, err := confine.Clean(reachablePath(r.path))
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
	kinds := map[string]string{} // name -> table, view, ...
	names, err := db.QueryContext(ctx, `SELECT name, type FROM sqlite_master`)
	if err != nil {
		return nil, 0, err // not a database, or a damaged one: never "no records"
	}
	for names.Next() {
		var name, kind string
		if err := names.Scan(&name, &kind); err != nil {
			names.Close()
			return nil, 0, err
		}
		kinds[name] = kind
	}
	names.Close()
	if err := names.Err(); err != nil {
		return nil, 0, err
	}
	// Why refuse rather than import no record: the original creates the table when it
	// starts, so a database without it (or with something else under its name) is not the
	// original's, and "0 ownership records" would make every group file everyone's.
	switch kinds["file_ownership"] {
	case "table":
	case "":
		return nil, 0, errors.New("no file_ownership table: not the original's ownership database")
	default:
		return nil, 0, fmt.Errorf("file_ownership is a %s, not the original's table", kinds["file_ownership"])
	}
	var records []originalRecord
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
	keys := 0
	if kinds["user_encryption"] == "table" {
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM user_encryption`).Scan(&keys); err != nil {
			return nil, 0, err
		}
	}
	return records, keys, nil
}
