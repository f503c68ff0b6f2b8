package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Link states, as Link.State reports them.
const (
	LinkActive    = "active"
	LinkExpired   = "expired"
	LinkRevoked   = "revoked"
	LinkExhausted = "exhausted"
)

// ErrNoLink reports a link id that is not stored (or, for the owner-scoped calls, that
// belongs to someone else: both answer the same).
var ErrNoLink = errors.New("store: no such link")

// ErrLinkGone reports a stored link that can no longer be used: expired, revoked or out of
// downloads.
var ErrLinkGone = errors.New("store: link expired, revoked or used up")

// Identity is what tells a file from its replacement: device, inode, size and modification
// time (size and mtime are zero for folders, whose content may change).
type Identity struct {
	Dev, Ino, Size, MtimeNS int64
}

// Link is a stored download link. Path is zone-relative; Zone is the zone label
// (uploads, storage, documents, group); ConvID is needed by uploads links, GroupID by group
// links. MaxDownloads 0 is unlimited. Revoked is zero while the link is not revoked. Page
// marks a link made by shed_save_page, the only kind that opens its file as a page (?view).
type Link struct {
	ID, Owner, Zone, ConvID, GroupID, Path string
	IsDir, Page                            bool
	Identity                               Identity
	Created, Expires, Revoked              time.Time
	MaxDownloads, Downloads                int64
}

// State is active, expired, revoked or exhausted at time now.
func (l Link) State(now time.Time) string {
	switch {
	case !l.Revoked.IsZero():
		return LinkRevoked
	case !now.Before(l.Expires):
		return LinkExpired
	case l.MaxDownloads > 0 && l.Downloads >= l.MaxDownloads:
		return LinkExhausted
	}
	return LinkActive
}

const linkColumns = `id, owner_id, zone, conv_id, group_id, path, is_dir, dev, ino, size, mtime_ns,
	created_us, expires_us, max_downloads, downloads, revoked_us, page`

// AddLink stores a new link (Created defaults to now).
func (d *DB) AddLink(ctx context.Context, l Link) error {
	if l.ID == "" || l.Owner == "" || l.Zone == "" || l.Expires.IsZero() || l.MaxDownloads < 0 {
		return errors.New("store: a link needs an id, an owner, a zone, an expiry and max_downloads >= 0")
	}
	_, err := d.durableExec(ctx, `INSERT INTO links (`+linkColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 0, 0, $15)`,
		l.ID, l.Owner, l.Zone, l.ConvID, l.GroupID, l.Path, l.IsDir, l.Identity.Dev, l.Identity.Ino,
		l.Identity.Size, l.Identity.MtimeNS, micros(l.Created), micros(l.Expires), l.MaxDownloads, l.Page)
	if err != nil {
		return fmt.Errorf("store: add link: %w", err)
	}
	return nil
}

// LinkByID reads a link whatever its state; ErrNoLink when it is not stored.
func (d *DB) LinkByID(ctx context.Context, id string) (Link, error) {
	ls, err := d.links(ctx, `SELECT `+linkColumns+` FROM links WHERE id = $1`, id)
	if err != nil {
		return Link{}, err
	}
	if len(ls) == 0 {
		return Link{}, ErrNoLink
	}
	return ls[0], nil
}

// LinksOf lists owner's links, newest first; owner "" lists everyone's (admin).
func (d *DB) LinksOf(ctx context.Context, owner string) ([]Link, error) {
	return d.links(ctx, `SELECT `+linkColumns+` FROM links WHERE ($1 = '' OR owner_id = $1)
		ORDER BY created_us DESC, id`, owner)
}

// UseLink counts one download of link id at time now, in one atomic UPDATE: only a link
// that is not revoked, not expired and has downloads left is counted, so N parallel
// downloads of a link with one download left count exactly one. ErrLinkGone when the link
// exists but cannot be used, ErrNoLink when it does not exist.
func (d *DB) UseLink(ctx context.Context, id string, now time.Time) error {
	res, err := d.exec(ctx, `UPDATE links SET downloads = downloads + 1
		WHERE id = $1 AND revoked_us = 0 AND expires_us > $2 AND (max_downloads = 0 OR downloads < max_downloads)`,
		id, micros(now))
	if err != nil {
		return fmt.Errorf("store: use link: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	if _, err := d.LinkByID(ctx, id); err != nil {
		return err
	}
	return ErrLinkGone
}

// RevokeLink revokes link id at time now. owner "" revokes anyone's (admin); otherwise a
// link of another owner answers ErrNoLink, like a missing one. Revoking twice is harmless.
func (d *DB) RevokeLink(ctx context.Context, id, owner string, now time.Time) (Link, error) {
	if _, err := d.durableExec(ctx, `UPDATE links SET revoked_us = $3
		WHERE id = $1 AND ($2 = '' OR owner_id = $2) AND revoked_us = 0`, id, owner, micros(now)); err != nil {
		return Link{}, fmt.Errorf("store: revoke link: %w", err)
	}
	l, err := d.LinkByID(ctx, id)
	if err != nil || (owner != "" && l.Owner != owner) {
		return Link{}, ErrNoLink
	}
	return l, nil
}

// links runs a query selecting linkColumns.
func (d *DB) links(ctx context.Context, query string, args ...any) ([]Link, error) {
	rows, err := d.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: read links: %w", err)
	}
	defer rows.Close()
	var out []Link
	for rows.Next() {
		var l Link
		var created, expires, revoked int64
		if err := rows.Scan(&l.ID, &l.Owner, &l.Zone, &l.ConvID, &l.GroupID, &l.Path, &l.IsDir,
			&l.Identity.Dev, &l.Identity.Ino, &l.Identity.Size, &l.Identity.MtimeNS,
			&created, &expires, &l.MaxDownloads, &l.Downloads, &revoked, &l.Page); err != nil {
			return nil, fmt.Errorf("store: read links: %w", err)
		}
		l.Created, l.Expires = fromMicros(created), fromMicros(expires)
		if revoked != 0 {
			l.Revoked = fromMicros(revoked)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: read links: %w", err)
	}
	return out, nil
}
