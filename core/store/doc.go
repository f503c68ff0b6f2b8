// Package store is fileshed's state database: quota usage, locked-edit locks, group file
// ownership and the audit trail, in one SQLite file ({storage_base_path}/fileshed.sqlite)
// reached through database/sql and modernc.org/sqlite.
//
// It sits below core: core opens one DB at start-up and translates the errors returned here
// (*QuotaError, ErrLocked, ErrNotHolder, plain errors) into its catalogue once. The SQL is
// written so that PostgreSQL would accept it too ($N placeholders, ON CONFLICT upserts, no
// LIKE, no SQLite-only functions), and every schema change is one numbered entry in
// migrations, so a PostgreSQL implementation can follow (DESIGN §9). Locker is the seam for
// cross-request mutual exclusion: an in-process keyed mutex here, advisory locks later.
//
// store is a leaf: it must never import github.com/fileshed/fileshed/core, handlers, openapi,
// huma, chi or net/http. Its errors never contain host paths.
package store
