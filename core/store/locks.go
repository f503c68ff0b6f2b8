package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrLocked reports that another conversation holds the lock; AcquireLock returns the
// holder's Lock with it.
var ErrLocked = errors.New("store: locked by another conversation")

// ErrNotHolder reports a release by a conversation that does not hold the lock (or of a lock
// that does not exist).
var ErrNotHolder = errors.New("store: lock not held by this conversation")

// Lock is a locked edit: the file Path (zone-relative) in the zone ZoneKey, held by the
// conversation ConvID of user UserID since Since.
type Lock struct {
	ZoneKey, Path, UserID, ConvID string
	Since                         time.Time
}

// validate refuses locks with an empty key or holder.
func (l Lock) validate() error {
	if l.ZoneKey == "" || l.Path == "" || l.UserID == "" || l.ConvID == "" {
		return errors.New("store: lock needs a zone key, a path, a user id and a conversation id")
	}
	return nil
}

// AcquireLock records l (Since defaults to now) and returns it as stored. If another holder
// has the lock, it returns that holder's Lock and ErrLocked. A lock held by the same
// conversation of the same user is refreshed (new Since), as the original's re-acquire did.
// A lock whose Since is more than maxAge before l.Since has expired and is taken over;
// maxAge <= 0 means locks never expire.
//
// Why one upsert: the (zone_key, path) primary key makes insertion the atomic test-and-set,
// and ON CONFLICT ... DO UPDATE ... WHERE replaces an expired or own row in the same
// statement, so two racing acquirers can never both win (the original's lock files had a
// check-then-write race).
func (d *DB) AcquireLock(ctx context.Context, l Lock, maxAge time.Duration) (Lock, error) {
	if err := l.validate(); err != nil {
		return Lock{}, err
	}
	sinceUs := micros(l.Since)
	l.Since = fromMicros(sinceUs)
	// Computed in microseconds, guarded, so that no maxAge can wrap around into "every lock
	// has expired".
	cutoff := int64(math.MinInt64)
	if age := maxAge.Microseconds(); maxAge > 0 && sinceUs > math.MinInt64+age {
		cutoff = sinceUs - age
	}
	var held Lock
	err := d.durably(ctx, func(ctx context.Context, tx conn) error {
		res, err := tx.exec(ctx, `INSERT INTO locks (zone_key, path, user_id, conv_id, since_us)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (zone_key, path) DO UPDATE SET
				user_id = excluded.user_id, conv_id = excluded.conv_id, since_us = excluded.since_us
			WHERE (locks.conv_id = excluded.conv_id AND locks.user_id = excluded.user_id)
				OR locks.since_us < $6`,
			l.ZoneKey, l.Path, l.UserID, l.ConvID, sinceUs, cutoff)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
		// Inside the same write transaction the row that refused us cannot have vanished.
		held, _, err = lockOf(ctx, tx, l.ZoneKey, l.Path)
		if err != nil {
			return err
		}
		return ErrLocked
	})
	switch {
	case errors.Is(err, ErrLocked):
		return held, ErrLocked
	case err != nil:
		return Lock{}, fmt.Errorf("store: acquire lock: %w", err)
	}
	return l, nil
}

// LockOf returns the lock on path in zoneKey, and whether there is one.
func (d *DB) LockOf(ctx context.Context, zoneKey, path string) (Lock, bool, error) {
	l, ok, err := lockOf(ctx, d.conn, zoneKey, path)
	if err != nil {
		return Lock{}, false, fmt.Errorf("store: read lock: %w", err)
	}
	return l, ok, nil
}

// lockOf reads one lock through q.
func lockOf(ctx context.Context, q conn, zoneKey, path string) (Lock, bool, error) {
	l := Lock{ZoneKey: zoneKey, Path: path}
	var since int64
	err := q.queryRow(ctx, `SELECT user_id, conv_id, since_us FROM locks
		WHERE zone_key = $1 AND path = $2`, zoneKey, path).Scan(&l.UserID, &l.ConvID, &since)
	if errors.Is(err, sql.ErrNoRows) {
		return Lock{}, false, nil
	}
	if err != nil {
		return Lock{}, false, err
	}
	l.Since = fromMicros(since)
	return l, true, nil
}

// ReleaseLock removes the lock on path in zoneKey if convID holds it; otherwise (another
// holder, or no lock at all) it returns ErrNotHolder and changes nothing.
func (d *DB) ReleaseLock(ctx context.Context, zoneKey, path, convID string) error {
	res, err := d.durableExec(ctx, `DELETE FROM locks WHERE zone_key = $1 AND path = $2 AND conv_id = $3`,
		zoneKey, path, convID)
	if err != nil {
		return fmt.Errorf("store: release lock: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: release lock: %w", err)
	}
	if n == 0 {
		return ErrNotHolder
	}
	return nil
}

// ForceReleaseLock removes the lock on path in zoneKey whoever holds it (shed_force_unlock,
// maintenance). Removing a lock that does not exist is not an error.
func (d *DB) ForceReleaseLock(ctx context.Context, zoneKey, path string) error {
	if _, err := d.durableExec(ctx, `DELETE FROM locks WHERE zone_key = $1 AND path = $2`,
		zoneKey, path); err != nil {
		return fmt.Errorf("store: force release lock: %w", err)
	}
	return nil
}

// ExpiredLocks returns every lock taken strictly before before, in every zone, ordered by
// zone key and path.
func (d *DB) ExpiredLocks(ctx context.Context, before time.Time) ([]Lock, error) {
	return d.locks(ctx, `SELECT zone_key, path, user_id, conv_id, since_us FROM locks
		WHERE since_us < $1 ORDER BY zone_key, path`, before.UnixMicro())
}

// LocksByConv returns the locks convID holds in zoneKey, ordered by path.
func (d *DB) LocksByConv(ctx context.Context, zoneKey, convID string) ([]Lock, error) {
	return d.locks(ctx, `SELECT zone_key, path, user_id, conv_id, since_us FROM locks
		WHERE zone_key = $1 AND conv_id = $2 ORDER BY path`, zoneKey, convID)
}

// LocksByUser returns the locks userID holds in every zone, oldest first.
func (d *DB) LocksByUser(ctx context.Context, userID string) ([]Lock, error) {
	return d.locks(ctx, `SELECT zone_key, path, user_id, conv_id, since_us FROM locks
		WHERE user_id = $1 ORDER BY since_us, zone_key, path`, userID)
}

// locks runs a query selecting whole lock rows.
func (d *DB) locks(ctx context.Context, query string, args ...any) ([]Lock, error) {
	rows, err := d.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list locks: %w", err)
	}
	defer rows.Close()
	var out []Lock
	for rows.Next() {
		var l Lock
		var since int64
		if err := rows.Scan(&l.ZoneKey, &l.Path, &l.UserID, &l.ConvID, &since); err != nil {
			return nil, fmt.Errorf("store: list locks: %w", err)
		}
		l.Since = fromMicros(since)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list locks: %w", err)
	}
	return out, nil
}
