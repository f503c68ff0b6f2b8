package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// OwnerUsage is one owner's recorded usage.
type OwnerUsage struct {
	Owner Owner
	Used  Amount
}

// Usages lists every owner's recorded usage, users then groups, by id.
func (d *DB) Usages(ctx context.Context) ([]OwnerUsage, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT owner_kind, owner_id, bytes, files FROM usage ORDER BY owner_kind DESC, owner_id`)
	if err != nil {
		return nil, fmt.Errorf("store: usages: %w", err)
	}
	defer rows.Close()
	var out []OwnerUsage
	for rows.Next() {
		var u OwnerUsage
		if err := rows.Scan(&u.Owner.Kind, &u.Owner.ID, &u.Used.Bytes, &u.Used.Files); err != nil {
			return nil, fmt.Errorf("store: usages: %w", err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// AllLocks lists every locked edit, oldest first.
func (d *DB) AllLocks(ctx context.Context) ([]Lock, error) {
	return d.locks(ctx, `SELECT zone_key, path, user_id, conv_id, since_us FROM locks ORDER BY since_us`)
}

// AuditFilter selects audit entries: [Since, Until) (zero = unbounded) and one user ("" = all).
type AuditFilter struct {
	Since, Until time.Time
	UserID       string
}

// ExportAudit writes the selected audit entries to w as JSON lines, oldest first, and
// returns how many it wrote. It streams: memory does not grow with the trail.
func (d *DB) ExportAudit(ctx context.Context, f AuditFilter, w io.Writer) (int, error) {
	since, until := int64(-1<<63), int64(1<<63-1) // zero times are unbounded (micros means "now")
	if !f.Since.IsZero() {
		since = micros(f.Since)
	}
	if !f.Until.IsZero() {
		until = micros(f.Until)
	}
	rows, err := d.sql.QueryContext(ctx, `SELECT at_us, user_id, conv_id, tool, zone, path, outcome FROM audit
		WHERE at_us >= $1 AND at_us < $2 AND ($3 = '' OR user_id = $3) ORDER BY at_us, id`, since, until, f.UserID)
	if err != nil {
		return 0, fmt.Errorf("store: audit export: %w", err)
	}
	defer rows.Close()
	enc := json.NewEncoder(w)
	n := 0
	for rows.Next() {
		var at int64
		var e struct {
			At      string `json:"at"`
			User    string `json:"user"`
			Conv    string `json:"conversation"`
			Tool    string `json:"tool"`
			Zone    string `json:"zone"`
			Path    string `json:"path"`
			Outcome string `json:"outcome"`
		}
		if err := rows.Scan(&at, &e.User, &e.Conv, &e.Tool, &e.Zone, &e.Path, &e.Outcome); err != nil {
			return n, fmt.Errorf("store: audit export: %w", err)
		}
		e.At = fromMicros(at).UTC().Format(time.RFC3339Nano)
		if err := enc.Encode(e); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// PruneAudit deletes the audit entries older than before and returns how many.
func (d *DB) PruneAudit(ctx context.Context, before time.Time) (int64, error) {
	res, err := d.sql.ExecContext(ctx, `DELETE FROM audit WHERE at_us < $1`, micros(before))
	if err != nil {
		return 0, fmt.Errorf("store: audit prune: %w", err)
	}
	return res.RowsAffected()
}

// BackupTo writes a consistent copy of the database to path (which must not exist) while
// it stays in use: SQLite's VACUUM INTO reads one snapshot of the database.
func (d *DB) BackupTo(ctx context.Context, path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("store: backup: %s exists", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: backup: %w", err)
	}
	if _, err := d.sql.ExecContext(ctx, `VACUUM INTO $1`, path); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	return os.Chmod(path, 0o600)
}

// IntegrityCheck runs SQLite's integrity check; nil means "ok".
func (d *DB) IntegrityCheck(ctx context.Context) error {
	var res string
	if err := d.sql.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("store: integrity check: %s", res)
	}
	return nil
}
