package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Ownership records who owns a file in a group zone and who may write it (reference §2.10):
// Mode is "owner" (owner only), "group" (every member) or "owner_ro" (nobody). Path is
// zone-relative. Created is when the record was first made.
type Ownership struct {
	GroupID, Path, Owner, Mode string
	Created                    time.Time
}

// validate refuses records that cannot be stored.
func (o Ownership) validate() error {
	if o.GroupID == "" || o.Path == "" || o.Owner == "" {
		return errors.New("store: ownership needs a group id, a path and an owner")
	}
	switch o.Mode {
	case "owner", "group", "owner_ro":
		return nil
	}
	return fmt.Errorf("store: ownership mode %q is not owner, group or owner_ro", o.Mode)
}

// Ownership returns the record for path in group groupID, and whether there is one (no
// record means the file is writable by every member).
func (d *DB) Ownership(ctx context.Context, groupID, path string) (Ownership, bool, error) {
	o := Ownership{GroupID: groupID, Path: path}
	var created int64
	err := d.queryRow(ctx, `SELECT owner_id, mode, created_us FROM ownership
		WHERE group_id = $1 AND path = $2`, groupID, path).Scan(&o.Owner, &o.Mode, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Ownership{}, false, nil
	}
	if err != nil {
		return Ownership{}, false, fmt.Errorf("store: read ownership: %w", err)
	}
	o.Created = fromMicros(created)
	return o, true, nil
}

// SetOwnership creates or replaces the record for (o.GroupID, o.Path). Created defaults to
// now; replacing a record keeps its original creation time and changes owner and mode.
func (d *DB) SetOwnership(ctx context.Context, o Ownership) error {
	if err := o.validate(); err != nil {
		return err
	}
	now := time.Now().UnixMicro()
	_, err := d.durableExec(ctx, `INSERT INTO ownership (group_id, path, owner_id, mode, created_us, updated_us)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (group_id, path) DO UPDATE SET
			owner_id = excluded.owner_id, mode = excluded.mode, updated_us = excluded.updated_us`,
		o.GroupID, o.Path, o.Owner, o.Mode, micros(o.Created), now)
	if err != nil {
		return fmt.Errorf("store: set ownership: %w", err)
	}
	return nil
}

// DeleteOwnership removes the record for path and, path being possibly a directory, those
// of everything under it ("path/..."), in group groupID.
func (d *DB) DeleteOwnership(ctx context.Context, groupID, path string) error {
	if groupID == "" || path == "" {
		return errors.New("store: ownership delete needs a group id and a path")
	}
	if _, err := d.durableExec(ctx, `DELETE FROM ownership WHERE group_id = $1 AND `+underOrAt,
		groupID, path, path+"/"); err != nil {
		return fmt.Errorf("store: delete ownership: %w", err)
	}
	return nil
}

// underOrAt matches path $2 itself and every path below it ($3 = $2 + "/").
//
// Why not LIKE '$2/%': LIKE treats '%' and '_' in file names as wildcards and, in SQLite, is
// case-insensitive for ASCII, so "A_b" would drag "a.b/x" along. substr/length compare
// exactly (binary) and exist in PostgreSQL too.
const underOrAt = `(path = $2 OR substr(path, 1, length($3)) = $3)`

// RenameOwnership moves the records of from and of everything under it to the same places
// under to, in group groupID, replacing any records at or under to (the rename replaced
// those files). Moving a path onto itself is a no-op; onto its own ancestor or descendant
// is refused (no file system can do that rename either).
func (d *DB) RenameOwnership(ctx context.Context, groupID, from, to string) error {
	if groupID == "" || from == "" || to == "" {
		return errors.New("store: ownership rename needs a group id and two paths")
	}
	if from == to {
		return nil
	}
	if strings.HasPrefix(to, from+"/") || strings.HasPrefix(from, to+"/") {
		return errors.New("store: cannot rename a path onto its own ancestor or descendant")
	}
	now := time.Now().UnixMicro()
	err := d.durably(ctx, func(ctx context.Context, tx conn) error {
		if _, err := tx.exec(ctx, `DELETE FROM ownership WHERE group_id = $1 AND `+underOrAt,
			groupID, to, to+"/"); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `UPDATE ownership SET path = $4 || substr(path, length($2) + 1), updated_us = $5
			WHERE group_id = $1 AND `+underOrAt, groupID, from, from+"/", to, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: rename ownership: %w", err)
	}
	return nil
}

// OwnershipUnder returns the records of path and of everything under it (path "" = the
// whole group), in group groupID, ordered by path.
func (d *DB) OwnershipUnder(ctx context.Context, groupID, path string) ([]Ownership, error) {
	q := `SELECT path, owner_id, mode, created_us FROM ownership WHERE group_id = $1`
	args := []any{groupID}
	if path != "" {
		q += ` AND ` + underOrAt
		args = append(args, path, path+"/")
	}
	rows, err := d.query(ctx, q+` ORDER BY path`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list ownership: %w", err)
	}
	defer rows.Close()
	var out []Ownership
	for rows.Next() {
		o := Ownership{GroupID: groupID}
		var created int64
		if err := rows.Scan(&o.Path, &o.Owner, &o.Mode, &created); err != nil {
			return nil, fmt.Errorf("store: list ownership: %w", err)
		}
		o.Created = fromMicros(created)
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list ownership: %w", err)
	}
	return out, nil
}

// CopyOwnership copies the records of from and of everything under it to the same places
// under to, replacing any records at or under to, in group groupID: the first half of a
// crash-safe rename (copy, move the files, then DeleteOwnership(from)). A crash between the
// steps leaves records for paths without files, which readers ignore.
func (d *DB) CopyOwnership(ctx context.Context, groupID, from, to string) error {
	if groupID == "" || from == "" || to == "" {
		return errors.New("store: ownership copy needs a group id and two paths")
	}
	if from == to || strings.HasPrefix(to, from+"/") || strings.HasPrefix(from, to+"/") {
		return errors.New("store: cannot copy ownership onto the same path, an ancestor or a descendant")
	}
	now := time.Now().UnixMicro()
	err := d.durably(ctx, func(ctx context.Context, tx conn) error {
		if _, err := tx.exec(ctx, `DELETE FROM ownership WHERE group_id = $1 AND `+underOrAt,
			groupID, to, to+"/"); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO ownership (group_id, path, owner_id, mode, created_us, updated_us)
			SELECT group_id, $4 || substr(path, length($2) + 1), owner_id, mode, created_us, $5
			FROM ownership WHERE group_id = $1 AND `+underOrAt, groupID, from, from+"/", to, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: copy ownership: %w", err)
	}
	return nil
}

// AddOwnership creates the record for (o.GroupID, o.Path) unless one exists (a file a
// command created: a record a tool wrote meanwhile wins).
func (d *DB) AddOwnership(ctx context.Context, o Ownership) error {
	if err := o.validate(); err != nil {
		return err
	}
	now := time.Now().UnixMicro()
	if _, err := d.durableExec(ctx, `INSERT INTO ownership (group_id, path, owner_id, mode, created_us, updated_us)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (group_id, path) DO NOTHING`,
		o.GroupID, o.Path, o.Owner, o.Mode, micros(o.Created), now); err != nil {
		return fmt.Errorf("store: add ownership: %w", err)
	}
	return nil
}
