package store

import "context"

// LocksUnder returns the locks of zoneKey on dir itself and on every path below it
// ("" = the whole zone), ordered by path: what a folder move or copy must respect.
func (d *DB) LocksUnder(ctx context.Context, zoneKey, dir string) ([]Lock, error) {
	if dir == "" {
		return d.locks(ctx, `SELECT zone_key, path, user_id, conv_id, since_us FROM locks
			WHERE zone_key = $1 ORDER BY path`, zoneKey)
	}
	return d.locks(ctx, `SELECT zone_key, path, user_id, conv_id, since_us FROM locks
		WHERE zone_key = $1 AND (path = $2 OR substr(path, 1, length($2) + 1) = $2 || '/') ORDER BY path`, zoneKey, dir)
}
