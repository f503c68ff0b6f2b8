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

// QuotaError reports an exceeded quota: Used, Requested, Limit (bytes).
type QuotaError struct{ Used, Requested, Limit int64 }

// Error implements error.
func (e *QuotaError) Error() string {
	return fmt.Sprintf("quota exceeded: %d bytes used + %d requested > limit %d", e.Used, e.Requested, e.Limit)
}

// Reserve atomically adds delta (>= 0) to the owner's usage if and only if used+delta <=
// limit, and returns *QuotaError otherwise.
//
// Why one statement: the check and the increment are the same conditional upsert, so two
// concurrent reservations can never both see the old value and jointly overshoot (on
// PostgreSQL too: ON CONFLICT DO UPDATE locks the row and re-checks the WHERE). The
// condition is written bytes <= limit-delta so it cannot overflow. The transaction around
// it only makes the numbers in a QuotaError consistent with the refusal.
func (d *DB) Reserve(ctx context.Context, o Owner, delta, limit int64) error {
	if err := o.validate(); err != nil {
		return err
	}
	if delta < 0 || delta > maxBytes || limit < 0 || limit > maxBytes {
		return fmt.Errorf("store: reservation of %d bytes against limit %d out of range", delta, limit)
	}
	return d.inTx(ctx, func(tx *sql.Tx) error {
		if delta > limit {
			return quotaError(ctx, tx, o, delta, limit)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO usage (owner_kind, owner_id, bytes) VALUES ($1, $2, $3)
			ON CONFLICT (owner_kind, owner_id) DO UPDATE SET bytes = usage.bytes + excluded.bytes
			WHERE usage.bytes <= $4`, o.Kind, o.ID, delta, limit-delta)
		if err != nil {
			return fmt.Errorf("store: reserve: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("store: reserve: %w", err)
		}
		if n == 0 {
			return quotaError(ctx, tx, o, delta, limit)
		}
		return nil
	})
}

// quotaError reads the current usage (inside the refusing transaction) into a *QuotaError.
func quotaError(ctx context.Context, tx *sql.Tx, o Owner, delta, limit int64) error {
	used, err := usage(ctx, tx, o)
	if err != nil {
		return err
	}
	return &QuotaError{Used: used, Requested: delta, Limit: limit}
}

// Adjust adds delta (which may be negative) to the owner's usage without a limit check:
// releases, shrinking writes, deletes, command results. Usage never goes below 0 (nor above
// the 2 EiB bound).
func (d *DB) Adjust(ctx context.Context, o Owner, delta int64) error {
	if err := o.validate(); err != nil {
		return err
	}
	if delta < -maxBytes || delta > maxBytes {
		return fmt.Errorf("store: adjustment of %d bytes out of range", delta)
	}
	_, err := d.sql.ExecContext(ctx, `INSERT INTO usage (owner_kind, owner_id, bytes) VALUES ($1, $2, $3)
		ON CONFLICT (owner_kind, owner_id) DO UPDATE SET bytes = CASE
			WHEN usage.bytes + $4 < 0 THEN 0
			WHEN usage.bytes + $4 > $5 THEN $5
			ELSE usage.bytes + $4 END`,
		o.Kind, o.ID, max(delta, 0), delta, maxBytes)
	if err != nil {
		return fmt.Errorf("store: adjust usage: %w", err)
	}
	return nil
}

// Usage returns the owner's recorded usage in bytes (0 when nothing was ever recorded).
func (d *DB) Usage(ctx context.Context, o Owner) (int64, error) {
	if err := o.validate(); err != nil {
		return 0, err
	}
	return usage(ctx, d.sql, o)
}

// SetUsage overwrites the owner's usage with a measured value (reconciliation by
// shed_maintenance).
func (d *DB) SetUsage(ctx context.Context, o Owner, bytes int64) error {
	if err := o.validate(); err != nil {
		return err
	}
	if bytes < 0 || bytes > maxBytes {
		return fmt.Errorf("store: usage of %d bytes out of range", bytes)
	}
	_, err := d.sql.ExecContext(ctx, `INSERT INTO usage (owner_kind, owner_id, bytes) VALUES ($1, $2, $3)
		ON CONFLICT (owner_kind, owner_id) DO UPDATE SET bytes = excluded.bytes`, o.Kind, o.ID, bytes)
	if err != nil {
		return fmt.Errorf("store: set usage: %w", err)
	}
	return nil
}

// querier is what both *sql.DB and *sql.Tx offer for a single-row read.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// usage reads one owner's usage through q.
func usage(ctx context.Context, q querier, o Owner) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT bytes FROM usage WHERE owner_kind = $1 AND owner_id = $2`,
		o.Kind, o.ID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: read usage: %w", err)
	}
	return n, nil
}
