// Package store is fileshed's state database: quota usage, locked-edit locks, group file
// ownership, download links, user keys and the audit trail, reached through database/sql.
// It lives in one SQLite file ({storage_base_path}/fileshed.sqlite, modernc.org/sqlite) by
// default, or in a PostgreSQL database (state.driver postgres, pgx) that several replicas
// share.
//
// It sits below core: core opens one DB at start-up and translates the errors returned here
// (*QuotaError, ErrLocked, ErrNotHolder, plain errors) into its catalogue once. There is one
// store and one set of queries for both drivers: the SQL is written so that both accept it
// ($N placeholders, ON CONFLICT upserts, no LIKE, no driver-only functions), every schema
// change is one numbered entry in migrations, and a small dialect (dialect.go) handles the
// few differences at the boundary. The replicas' rows, journal and sessions (replicas.go)
// use PostgreSQL's advisory locks, and only with that driver. Locker is the seam for cross-request mutual exclusion:
// an in-process keyed mutex here, advisory locks later.
//
// store is a leaf: it must never import github.com/fileshed/fileshed/core, handlers, openapi,
// huma, chi or net/http. Its errors never contain host paths or the PostgreSQL URL.
package store
