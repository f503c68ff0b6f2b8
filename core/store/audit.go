package store

import (
	"context"
	"fmt"
	"time"
)

// AuditEntry is one line of the audit trail: who (UserID, ConvID) ran which Tool, where
// (Zone and zone-relative Path), when (At, default now) and with what Outcome (for example
// "ok" or an error code). It must never carry secrets or host paths.
type AuditEntry struct {
	At                                        time.Time
	UserID, ConvID, Tool, Zone, Path, Outcome string
}

// Audit appends e to the audit trail.
func (d *DB) Audit(ctx context.Context, e AuditEntry) error {
	_, err := d.exec(ctx, `INSERT INTO audit (at_us, user_id, conv_id, tool, zone, path, outcome)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		micros(e.At), e.UserID, e.ConvID, e.Tool, e.Zone, e.Path, e.Outcome)
	if err != nil {
		return fmt.Errorf("store: audit: %w", err)
	}
	return nil
}
