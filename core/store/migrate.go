package store

import (
	"context"
	"fmt"
	"time"
)

// migration is one schema change. Versions are 1, 2, 3... in list order; a shipped entry is
// never edited, only followed by a new one (the links tables will be version 2).
type migration struct {
	version int
	name    string
	stmts   []string
}

// migrations is the one place the schema is defined, for both drivers. Types and statements
// are chosen so that SQLite and PostgreSQL accept them alike: BIGINT microsecond timestamps,
// TEXT ids, INTEGER 0/1 for booleans, composite primary keys as the uniqueness that makes
// lock acquisition atomic. The two types they spell differently are placeholders that
// dialect.ddl fills in: {blob} and {rowid}.
var migrations = []migration{
	{version: 1, name: "usage, locks, ownership, audit", stmts: []string{
		// Usage per owner, in bytes; kept >= 0 by the statements that write it.
		`CREATE TABLE usage (
			owner_kind TEXT NOT NULL CHECK (owner_kind IN ('user', 'group')),
			owner_id   TEXT NOT NULL,
			bytes      BIGINT NOT NULL DEFAULT 0 CHECK (bytes >= 0),
			PRIMARY KEY (owner_kind, owner_id)
		)`,
		// Locked edits: the primary key is what makes acquiring a lock atomic.
		`CREATE TABLE locks (
			zone_key TEXT NOT NULL,
			path     TEXT NOT NULL,
			user_id  TEXT NOT NULL,
			conv_id  TEXT NOT NULL,
			since_us BIGINT NOT NULL,
			PRIMARY KEY (zone_key, path)
		)`,
		`CREATE INDEX locks_since ON locks (since_us)`,
		`CREATE INDEX locks_conv ON locks (zone_key, conv_id)`,
		// Group file ownership (reference §2.10: file_ownership).
		`CREATE TABLE ownership (
			group_id   TEXT NOT NULL,
			path       TEXT NOT NULL,
			owner_id   TEXT NOT NULL,
			mode       TEXT NOT NULL CHECK (mode IN ('owner', 'group', 'owner_ro')),
			created_us BIGINT NOT NULL,
			updated_us BIGINT NOT NULL,
			PRIMARY KEY (group_id, path)
		)`,
		// Audit trail; {rowid} is SQLite's rowid, an identity column on PostgreSQL.
		`CREATE TABLE audit (
			id      {rowid},
			at_us   BIGINT NOT NULL,
			user_id TEXT NOT NULL,
			conv_id TEXT NOT NULL,
			tool    TEXT NOT NULL,
			zone    TEXT NOT NULL,
			path    TEXT NOT NULL,
			outcome TEXT NOT NULL
		)`,
		`CREATE INDEX audit_at ON audit (at_us)`,
	}},
	{version: 2, name: "links", stmts: []string{
		// Download links (core/links.go). id is the random public half of the token; the
		// file's identity at creation (device, inode, size, mtime) tells a replaced file from
		// the linked one. max_downloads 0 is unlimited; revoked_us 0 is not revoked.
		`CREATE TABLE links (
			id            TEXT PRIMARY KEY,
			owner_id      TEXT NOT NULL,
			zone          TEXT NOT NULL,
			conv_id       TEXT NOT NULL,
			group_id      TEXT NOT NULL,
			path          TEXT NOT NULL,
			is_dir        INTEGER NOT NULL,
			dev           BIGINT NOT NULL,
			ino           BIGINT NOT NULL,
			size          BIGINT NOT NULL,
			mtime_ns      BIGINT NOT NULL,
			created_us    BIGINT NOT NULL,
			expires_us    BIGINT NOT NULL,
			max_downloads BIGINT NOT NULL CHECK (max_downloads >= 0),
			downloads     BIGINT NOT NULL DEFAULT 0,
			revoked_us    BIGINT NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX links_owner ON links (owner_id, created_us)`,
	}},
	{version: 3, name: "user keys", stmts: []string{
		// Encryption at rest (core/encryption.go): a user's data key wrapped by the key derived
		// from the server's master key; key_id names that master key (a wrong one is told at
		// start). state is active, or disabled after shed_encryption disable (the key is kept:
		// a file sealed by a call in flight stays readable).
		`CREATE TABLE user_keys (
			user_id    TEXT PRIMARY KEY,
			wrapped    {blob} NOT NULL,
			salt       {blob} NOT NULL,
			key_id     TEXT NOT NULL,
			state      TEXT NOT NULL CHECK (state IN ('active', 'disabled')),
			created_us BIGINT NOT NULL,
			updated_us BIGINT NOT NULL
		)`,
	}},
	{version: 4, name: "link pages", stmts: []string{
		// A link made by shed_save_page: only such a link renders its file as a page with
		// ?view (issue 24); every link stored before is a plain download.
		`ALTER TABLE links ADD COLUMN page INTEGER NOT NULL DEFAULT 0`,
	}},
	{version: 5, name: "usage file count", stmts: []string{
		// The names (files, folders, links) each owner holds, beside the bytes (the file
		// quota: one user must not exhaust the inodes of the shared volume). Existing rows
		// start at 0, which the first use in a process reconciles with the disk.
		`ALTER TABLE usage ADD COLUMN files BIGINT NOT NULL DEFAULT 0 CHECK (files >= 0)`,
	}},
	{version: 6, name: "group members seen", stmts: []string{
		// Membership the server has seen (members.go, issue 28): every authenticated request
		// tells the caller's groups; a row per user and group, with the display name, the
		// last request that listed the group, and left_us, the first request after it that
		// did not (0 while a member). Rows are never deleted: left refuses a former
		// member's links.
		`CREATE TABLE group_members (
			group_id      TEXT NOT NULL,
			user_id       TEXT NOT NULL,
			name          TEXT NOT NULL,
			first_seen_us BIGINT NOT NULL,
			last_seen_us  BIGINT NOT NULL,
			left_us       BIGINT NOT NULL DEFAULT 0,
			PRIMARY KEY (group_id, user_id)
		)`,
		// A group's current members, most recently seen first (shed_group info, chown hints).
		`CREATE INDEX group_members_list ON group_members (group_id, left_us, last_seen_us)`,
		// A user's groups (the groups a request no longer lists are marked left).
		`CREATE INDEX group_members_user ON group_members (user_id, left_us)`,
	}},
	{version: 7, name: "server keys", stmts: []string{
		// Keys every server of one state database must share (SharedKey): the link-signing
		// key of replicas, so a link made on one verifies on all.
		`CREATE TABLE server_keys (
			name       TEXT PRIMARY KEY,
			value      {blob} NOT NULL,
			created_us BIGINT NOT NULL
		)`,
	}},
	{version: 8, name: "replicas", stmts: []string{
		// The servers of one storage with state.driver postgres (replicas.go): a random id
		// per process, its host and pid for the operator, and the database's times of its
		// start and of its last heartbeat.
		`CREATE TABLE replicas (
			id         TEXT PRIMARY KEY,
			host       TEXT NOT NULL,
			pid        BIGINT NOT NULL,
			started_us BIGINT NOT NULL,
			seen_us    BIGINT NOT NULL
		)`,
		// The journal of reservations: the owners each replica reserved usage for. When a
		// replica dies with a reservation in flight, the leader measures exactly these
		// owners again, not every owner of the storage.
		`CREATE TABLE replica_owners (
			replica_id TEXT NOT NULL,
			owner_kind TEXT NOT NULL,
			owner_id   TEXT NOT NULL,
			PRIMARY KEY (replica_id, owner_kind, owner_id)
		)`,
	}},
	{version: 9, name: "state identity", stmts: []string{
		// What tells this state database from another, and the settings every server of it
		// must share (identity.go): the database's random id and the storage directory it
		// serves, which the storage's record (.fileshed-state) is compared with both ways;
		// fingerprints of the encryption master key and of the links secret, never the
		// values.
		`CREATE TABLE state_identity (
			name       TEXT PRIMARY KEY,
			value      TEXT NOT NULL,
			updated_us BIGINT NOT NULL
		)`,
	}},
	{version: 10, name: "commands", stmts: []string{
		// The writing commands running in versioned spaces (core/recover_commands.go): one
		// row from before a command runs until its settlement ended, so that the recovery
		// of a command killed with its server (kill -9, a dead replica) applies its guards
		// before it commits: who ran it (user, name and e-mail of the commit, conversation),
		// where (the space's owner), on which replica, its commit message, and the protected
		// names (.git...) already in the zone before it ran, one strconv.Quote'd path a line.
		`CREATE TABLE commands (
			id         TEXT PRIMARY KEY,
			replica_id TEXT NOT NULL,
			owner_kind TEXT NOT NULL CHECK (owner_kind IN ('user', 'group')),
			owner_id   TEXT NOT NULL,
			user_id    TEXT NOT NULL,
			user_name  TEXT NOT NULL,
			user_email TEXT NOT NULL,
			conv_id    TEXT NOT NULL,
			message    TEXT NOT NULL,
			protected  TEXT NOT NULL,
			started_us BIGINT NOT NULL
		)`,
		`CREATE INDEX commands_owner ON commands (owner_kind, owner_id)`,
		`CREATE INDEX commands_replica ON commands (replica_id)`,
	}},
	{version: 11, name: "journal", stmts: []string{
		// The change journal (core/journal.go, issue 36): one row per path a change of a
		// zone touched, written 'pending' before the change runs and 'done' after it (a
		// pending row left by a server killed between the two is settled by comparing the
		// path with its identity before: unchanged, the row goes; changed, it stays). batch
		// names the tool call (or undo) the row belongs to, n the row within it. Sizes are -1
		// for an absent entry, lines -1 when not counted. image is where the before-image is
		// ("git": the commit's parent; "cas:<sha256>" or "tree:<sha256>" in the owner's
		// journal area; "" with no_image saying why), image_bytes what it holds there.
		// before_ident/old_ident/after_ident are the entry's identity (device, inode, size,
		// mtime) before and after, "" when absent. made is the topmost folder a creation
		// made for its file (removed with it by an undo). undoes is the batch an undo reverted,
		// undone_by the undo that reverted this row.
		`CREATE TABLE journal (
			id            {rowid},
			batch         TEXT NOT NULL,
			n             INTEGER NOT NULL,
			state         TEXT NOT NULL CHECK (state IN ('pending', 'done')),
			replica_id    TEXT NOT NULL,
			at_us         BIGINT NOT NULL,
			user_id       TEXT NOT NULL,
			conv_id       TEXT NOT NULL,
			tool          TEXT NOT NULL,
			owner_kind    TEXT NOT NULL CHECK (owner_kind IN ('user', 'group')),
			owner_id      TEXT NOT NULL,
			zone          TEXT NOT NULL,
			group_id      TEXT NOT NULL,
			path          TEXT NOT NULL,
			old_path      TEXT NOT NULL,
			made          TEXT NOT NULL,
			op            TEXT NOT NULL,
			is_dir        INTEGER NOT NULL,
			bytes_before  BIGINT NOT NULL,
			bytes_after   BIGINT NOT NULL,
			lines_added   BIGINT NOT NULL,
			lines_removed BIGINT NOT NULL,
			commit_id     TEXT NOT NULL,
			image         TEXT NOT NULL,
			image_bytes   BIGINT NOT NULL,
			no_image      TEXT NOT NULL,
			before_ident  TEXT NOT NULL,
			old_ident     TEXT NOT NULL,
			after_ident   TEXT NOT NULL,
			undoes        TEXT NOT NULL,
			undone_by     TEXT NOT NULL
		)`,
		`CREATE UNIQUE INDEX journal_batch ON journal (batch, n)`,
		`CREATE INDEX journal_user ON journal (user_id, conv_id, id)`,
		`CREATE INDEX journal_path ON journal (owner_kind, owner_id, zone, path)`,
		`CREATE INDEX journal_state ON journal (state, replica_id)`,
		`CREATE INDEX journal_at ON journal (owner_kind, owner_id, at_us)`,
	}},
	{version: 12, name: "journal inline images", stmts: []string{
		// A small file's before-image in the row itself (core/journal_inline.go): written by
		// the change's pending INSERT, no file in the journal area; sealed like the zone when
		// it is encrypted; NULL when the image is elsewhere (image says where) or was dropped.
		// Last in the row, so a listing that does not select it does not read it.
		`ALTER TABLE journal ADD COLUMN image_data {blob}`,
		// Four indexes where there were five, one of them holding only the pending rows: each
		// pending row's INSERT writes one page fewer. The owner's rows in id order serve the
		// later changes of a path (JournalLater: id > the change's), the images of an owner
		// and the expiry; the path was never usable there (its conditions are ORed).
		`DROP INDEX journal_path`,
		`DROP INDEX journal_at`,
		`DROP INDEX journal_state`,
		`CREATE INDEX journal_owner ON journal (owner_kind, owner_id, zone, id)`,
		`CREATE INDEX journal_pending ON journal (replica_id) WHERE state = 'pending'`,
	}},
}

// Advisory lock keys on PostgreSQL, in the two-key form (pg_advisory_xact_lock(int, int)),
// whose key space is apart from the one-key form's: migrationLock in fileshed's namespace.
const (
	advisoryNamespace = 0x66736864 // "fshd"
	migrationLock     = 1
	// identityLock (3) serialises the servers' start-up check of the state's identity.
	identityLock = 3
)

// migrate applies the pending migrations in one transaction, records each in
// schema_migrations, and returns the schema version found and the version left. Running it
// again is a no-op. Two processes migrating at once are serialised before either reads the
// version: on SQLite by the transaction's write lock (BEGIN IMMEDIATE), on PostgreSQL by
// an advisory lock held until the transaction ends; the second then finds the first's work
// done. A version newer than this binary knows is refused.
//
// Only ctx bounds it, not stmtTimeout: a migration of a large table takes its time, and a
// migration job waits for another's lock (servers pass a bounded ctx: OpenSource).
func (d *DB) migrate(ctx context.Context) (before, after int, err error) {
	long := &DB{conn: d.unbounded(), sql: d.sql}
	err = long.inTx(ctx, func(ctx context.Context, tx conn) error {
		if d.dialect == Postgres {
			// Why first: even CREATE TABLE IF NOT EXISTS races on PostgreSQL (a unique
			// violation in its catalog), so nothing may run before the lock is held.
			if _, err := tx.exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, advisoryNamespace, migrationLock); err != nil {
				return err
			}
		}
		if _, err := tx.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_us BIGINT NOT NULL
		)`); err != nil {
			return err
		}
		if err := tx.queryRow(ctx,
			`SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&before); err != nil {
			return err
		}
		if before > len(migrations) {
			return fmt.Errorf("the state database has schema version %d, newer than this fileshed knows (%d): "+
				"run the fileshed that wrote it, or a newer one", before, len(migrations))
		}
		for _, m := range migrations[before:] {
			for _, stmt := range m.stmts {
				if _, err := tx.exec(ctx, d.dialect.ddl(stmt)); err != nil {
					return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
				}
			}
			if _, err := tx.exec(ctx,
				`INSERT INTO schema_migrations (version, name, applied_us) VALUES ($1, $2, $3)`,
				m.version, m.name, time.Now().UnixMicro()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("store: migrate state database: %w", err)
	}
	return before, len(migrations), nil
}

// SchemaVersion is the schema version this fileshed's migrations reach.
func SchemaVersion() int { return len(migrations) }
