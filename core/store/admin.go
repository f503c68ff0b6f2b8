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
	rows, err := d.query(ctx, `SELECT owner_kind, owner_id, bytes, files FROM usage ORDER BY owner_kind DESC, owner_id`)
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
// returns how many it wrote. It streams: memory does not grow with the trail, and only ctx
// bounds it (a long trail takes longer than stmtTimeout).
func (d *DB) ExportAudit(ctx context.Context, f AuditFilter, w io.Writer) (int, error) {
	since, until := int64(-1<<63), int64(1<<63-1) // zero times are unbounded (micros means "now")
	if !f.Since.IsZero() {
		since = micros(f.Since)
	}
	if !f.Until.IsZero() {
		until = micros(f.Until)
	}
	rows, err := d.unbounded().query(ctx, `SELECT at_us, user_id, conv_id, tool, zone, path, outcome FROM audit
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
	res, err := d.exec(ctx, `DELETE FROM audit WHERE at_us < $1`, micros(before))
	if err != nil {
		return 0, fmt.Errorf("store: audit prune: %w", err)
	}
	return res.RowsAffected()
}

// ErrNoFileBackup reports that the state database is not a file a backup can copy: back
// a PostgreSQL state up with pg_dump.
var ErrNoFileBackup = errors.New("store: the state database is PostgreSQL: back it up with pg_dump")

// BackupTo writes a consistent copy of the database to path (which must not exist) while
// it stays in use: SQLite's VACUUM INTO reads one snapshot of the database. A PostgreSQL
// state answers ErrNoFileBackup.
func (d *DB) BackupTo(ctx context.Context, path string) error {
	if d.dialect == Postgres {
		return ErrNoFileBackup
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("store: backup: %s exists", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: backup: %w", err)
	}
	if _, err := d.exec(ctx, `VACUUM INTO $1`, path); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	return os.Chmod(path, 0o600)
}

// IntegrityCheck checks the database; nil means "ok". On SQLite it is PRAGMA
// integrity_check (pages, indexes, constraints). PostgreSQL has no such statement (amcheck
// is an extension, pg_amcheck an operator's tool): the check there is that the schema is
// this fileshed's version and that every table reads through to its last row, which fails
// on a damaged page when the cluster has data checksums.
func (d *DB) IntegrityCheck(ctx context.Context) error {
	if d.dialect == Postgres {
		return d.readEveryTable(ctx)
	}
	var res string
	if err := d.queryRow(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("store: integrity check: %s", res)
	}
	return nil
}

// tables are the tables the migrations create, for readEveryTable.
var tables = []string{"schema_migrations", "usage", "locks", "ownership", "audit", "links", "user_keys", "group_members", "server_keys",
	"replicas", "replica_owners", "state_identity", "commands", "journal"}

// readEveryTable is the PostgreSQL integrity check (IntegrityCheck).
func (d *DB) readEveryTable(ctx context.Context) error {
	var version int
	if err := d.queryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&version); err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	if version != len(migrations) {
		return fmt.Errorf("store: integrity check: schema version %d, this fileshed's is %d", version, len(migrations))
	}
	for _, t := range tables {
		// count(x) of the whole row x reads every row in full (a count(*) may read an index
		// only); a long audit trail takes its time, so only ctx bounds it.
		var n int64
		if err := d.unbounded().queryRow(ctx, `SELECT count(x) FROM `+t+` x`).Scan(&n); err != nil {
			return fmt.Errorf("store: integrity check: table %s: %w", t, err)
		}
	}
	return nil
}
