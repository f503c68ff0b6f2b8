// Package sqlq runs the model's SQL and CSV imports on a user's SQLite database with
// guard rails enforced by SQLite itself, not by parsing SQL: an authorizer that denies
// ATTACH, DETACH, load_extension, unknown virtual tables and every PRAGMA outside a short
// read-only list (and, read-only, every write), no attached databases
// (SQLITE_LIMIT_ATTACHED=0), defensive mode, trusted_schema=OFF, mode=ro for read-only
// opens, a bounded value length, statements interrupted when their context ends, and
// results capped while they are read.
//
// It knows nothing of zones, quotas or HTTP: core opens the confined file and settles
// the accounting around these calls.
package sqlq
