package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// maxBytes bounds every usage value, delta and limit (2 EiB). Why: with all operands inside
// ±maxBytes, bytes+delta stays far from int64 overflow, which SQLite would silently turn
// into a floating-point value and PostgreSQL into an error.
const maxBytes int64 = 1 << 61

// Owner is whose usage is counted: Kind "user" or "group", and that user's or group's id.
type Owner struct{ Kind, ID string }

// validate refuses owners that cannot be a usage row.
func (o Owner) validate() error {
	if o.Kind != "user" && o.Kind != "group" {
		return fmt.Errorf("store: owner kind %q is neither user nor group", o.Kind)
	}
	if o.ID == "" {
		return errors.New("store: empty owner id")
	}
	return nil
}

// Amount is a quantity of usage: the bytes of regular files, and the names that hold them
// (files, folders, links: every name takes an inode of the shared volume).
type Amount struct{ Bytes, Files int64 }

// inRange reports whether both quantities are within [lo, maxBytes].
func (a Amount) inRange(lo int64) bool {
	return a.Bytes >= lo && a.Bytes <= maxBytes && a.Files >= lo && a.Files <= maxBytes
}

// QuotaError reports an exceeded quota: Used, Requested, Limit.
type QuotaError struct{ Used, Requested, Limit Amount }

// Files reports whether the file count, not the bytes, is what the request exceeds.
func (e *QuotaError) Files() bool {
	return e.Requested.Files > 0 && e.Requested.Files > e.Limit.Files-e.Used.Files
}

// Error implements error.
func (e *QuotaError) Error() string {
	if e.Files() {
		return fmt.Sprintf("quota exceeded: %d files used + %d requested > limit %d", e.Used.Files, e.Requested.Files, e.Limit.Files)
	}
	return fmt.Sprintf("quota exceeded: %d bytes used + %d requested > limit %d", e.Used.Bytes, e.Requested.Bytes, e.Limit.Bytes)
}

// Reserve atomically adds delta (>= 0) to the owner's usage if and only if, for each of
// bytes and files that delta grows, used+delta <= limit, and returns *QuotaError otherwise.
// A quantity delta does not grow is not checked (an owner over a lowered file limit may
// still grow a file it has).
//
// Why one statement: the check and the increment are the same conditional upsert, so two
// concurrent reservations can never both see the old value and jointly overshoot (on
// PostgreSQL too: ON CONFLICT DO UPDATE locks the row and re-checks the WHERE). The
// condition is written used <= limit-delta so it cannot overflow. A reservation that fits
// is that one statement (one round trip to PostgreSQL); a refusal is tried again inside a
// transaction, only so that the numbers in its QuotaError are the ones it was refused on.
func (d *DB) Reserve(ctx context.Context, o Owner, delta, limit Amount) error {
	if err := o.validate(); err != nil {
		return err
	}
	if !delta.inRange(0) || !limit.inRange(0) {
		return fmt.Errorf("store: reservation of %+v against limit %+v out of range", delta, limit)
	}
	fits := delta.Bytes <= limit.Bytes && delta.Files <= limit.Files
	if fits {
		if ok, err := reserve(ctx, d.conn, o, delta, limit); err != nil || ok {
			return err
		}
	}
	return d.inTx(ctx, func(ctx context.Context, tx conn) error {
		if fits {
			if ok, err := reserve(ctx, tx, o, delta, limit); err != nil || ok {
				return err
			}
		}
		return quotaError(ctx, tx, o, delta, limit)
	})
}

// reserve runs Reserve's conditional upsert through c and reports whether it was applied.
func reserve(ctx context.Context, c conn, o Owner, delta, limit Amount) (bool, error) {
	bound := func(delta, limit int64) int64 {
		if delta == 0 {
			return maxBytes // not grown: not checked
		}
		return limit - delta
	}
	res, err := c.exec(ctx, `INSERT INTO usage (owner_kind, owner_id, bytes, files) VALUES ($1, $2, $3, $4)
		ON CONFLICT (owner_kind, owner_id) DO UPDATE SET bytes = usage.bytes + excluded.bytes, files = usage.files + excluded.files
		WHERE usage.bytes <= $5 AND usage.files <= $6`,
		o.Kind, o.ID, delta.Bytes, delta.Files, bound(delta.Bytes, limit.Bytes), bound(delta.Files, limit.Files))
	if err != nil {
		return false, fmt.Errorf("store: reserve: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: reserve: %w", err)
	}
	return n == 1, nil
}

// quotaError reads the current usage (inside the refusing transaction) into a *QuotaError.
func quotaError(ctx context.Context, tx conn, o Owner, delta, limit Amount) error {
	used, err := usage(ctx, tx, o)
	if err != nil {
		return err
	}
	return &QuotaError{Used: used, Requested: delta, Limit: limit}
}

// Adjust adds delta (whose quantities may be negative) to the owner's usage without a
// limit check: releases, shrinking writes, deletes, command results. Usage never goes below
// 0 (nor above the 2 EiB bound).
func (d *DB) Adjust(ctx context.Context, o Owner, delta Amount) error {
	if err := o.validate(); err != nil {
		return err
	}
	if !delta.inRange(-maxBytes) {
		return fmt.Errorf("store: adjustment of %+v out of range", delta)
	}
	_, err := d.exec(ctx, `INSERT INTO usage (owner_kind, owner_id, bytes, files) VALUES ($1, $2, $3, $4)
		ON CONFLICT (owner_kind, owner_id) DO UPDATE SET bytes = CASE
			WHEN usage.bytes + $5 < 0 THEN 0
			WHEN usage.bytes + $5 > $7 THEN $7
			ELSE usage.bytes + $5 END, files = CASE
			WHEN usage.files + $6 < 0 THEN 0
			WHEN usage.files + $6 > $7 THEN $7
			ELSE usage.files + $6 END`,
		o.Kind, o.ID, max(delta.Bytes, 0), max(delta.Files, 0), delta.Bytes, delta.Files, maxBytes)
	if err != nil {
		return fmt.Errorf("store: adjust usage: %w", err)
	}
	return nil
}

// Usage returns the owner's recorded usage (zero when nothing was ever recorded).
func (d *DB) Usage(ctx context.Context, o Owner) (Amount, error) {
	if err := o.validate(); err != nil {
		return Amount{}, err
	}
	return usage(ctx, d.conn, o)
}

// SetUsage overwrites the owner's usage with a measured value (reconciliation by
// shed_maintenance).
func (d *DB) SetUsage(ctx context.Context, o Owner, u Amount) error {
	if err := o.validate(); err != nil {
		return err
	}
	if !u.inRange(0) {
		return fmt.Errorf("store: usage of %+v out of range", u)
	}
	_, err := d.exec(ctx, `INSERT INTO usage (owner_kind, owner_id, bytes, files) VALUES ($1, $2, $3, $4)
		ON CONFLICT (owner_kind, owner_id) DO UPDATE SET bytes = excluded.bytes, files = excluded.files`, o.Kind, o.ID, u.Bytes, u.Files)
	if err != nil {
		return fmt.Errorf("store: set usage: %w", err)
	}
	return nil
}

// usage reads one owner's usage through q.
func usage(ctx context.Context, q conn, o Owner) (Amount, error) {
	var u Amount
	err := q.queryRow(ctx, `SELECT bytes, files FROM usage WHERE owner_kind = $1 AND owner_id = $2`,
		o.Kind, o.ID).Scan(&u.Bytes, &u.Files)
	if errors.Is(err, sql.ErrNoRows) {
		return Amount{}, nil
	}
	if err != nil {
		return Amount{}, fmt.Errorf("store: read usage: %w", err)
	}
	return u, nil
}
