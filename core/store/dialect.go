package store

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// Drivers of the state database (the valve state.driver).
const (
	// SQLite keeps the state in one file beside the zones: one server, nothing to set up.
	SQLite = "sqlite"
	// Postgres keeps the state in a PostgreSQL database (pgx), which several replicas share.
	Postgres = "postgres"
)

// dialect is what differs between the drivers, and only that: the queries, the schema and
// the migrations are written once, in SQL both accept ($N placeholders, ON CONFLICT upserts,
// substr/length, BIGINT microsecond times), and pass through the dialect at the boundary.
//
//   - connection: a file: URI for modernc's "sqlite" driver, a URL for pgx's stdlib (Open);
//   - DDL: the placeholders {blob} (BLOB, BYTEA) and {rowid} (the audit id: SQLite's INTEGER
//     PRIMARY KEY rowid, a BIGINT identity on PostgreSQL) (ddl);
//   - values: a Go bool is bound as 0 or 1 (the columns are INTEGER, and pgx refuses a bool
//     for an INTEGER parameter); text PostgreSQL cannot hold is escaped (args, pgText);
//   - errors: PostgreSQL's serialization failures and deadlocks are retried (retryable);
//     SQLite's busy lock is waited for by busy_timeout in the driver;
//   - migrations: an advisory lock on PostgreSQL, SQLite's BEGIN IMMEDIATE (migrate.go);
//   - pool sizes, the integrity check and the backup (db.go, admin.go).
//
// Upserts need nothing: ON CONFLICT ... DO UPDATE ... WHERE runs unchanged on both, and on
// PostgreSQL locks the conflicting row and re-checks the WHERE, so Reserve stays one
// conditional statement. No query uses RETURNING.
type dialect string

// ddl writes a migration statement in the dialect.
func (d dialect) ddl(stmt string) string {
	if d == Postgres {
		return pgDDL.Replace(stmt)
	}
	return sqliteDDL.Replace(stmt)
}

var (
	sqliteDDL = strings.NewReplacer("{blob}", "BLOB", "{rowid}", "INTEGER PRIMARY KEY")
	pgDDL     = strings.NewReplacer("{blob}", "BYTEA", "{rowid}", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
)

// args converts statement arguments at the boundary: bools to 0/1, and on PostgreSQL text
// through pgText. The caller's slice is not changed.
func (d dialect) args(args []any) []any {
	var out []any
	set := func(i int, v any) {
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = v
	}
	for i, a := range args {
		switch v := a.(type) {
		case bool:
			set(i, boolInt(v))
		case string:
			if d == Postgres {
				if e := pgText(v); e != v {
					set(i, e)
				}
			}
		}
	}
	if out == nil {
		return args
	}
	return out
}

// boolInt is how a bool is stored: 1 or 0.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// dests wraps the *string scan destinations so that PostgreSQL text comes back through
// fromPGText: what the store returns is exactly what it was given, on both drivers.
func (d dialect) dests(dest []any) []any {
	if d != Postgres {
		return dest
	}
	var out []any
	for i, p := range dest {
		if s, ok := p.(*string); ok {
			if out == nil {
				out = append([]any(nil), dest...)
			}
			out[i] = pgString{s}
		}
	}
	if out == nil {
		return dest
	}
	return out
}

// pgString scans a PostgreSQL text value into a string, undoing pgText.
type pgString struct{ p *string }

// Scan implements sql.Scanner.
func (s pgString) Scan(src any) error {
	switch v := src.(type) {
	case string:
		*s.p = fromPGText(v)
	case []byte:
		*s.p = fromPGText(string(v))
	default:
		return errors.New("store: a text column held no text")
	}
	return nil
}

// textEscape starts an escaped byte in PostgreSQL text: U+FDD0, a Unicode noncharacter
// (reserved for a program's internal use, so never part of real text).
const textEscape = "\uFDD0"

// pgText makes s storable in a PostgreSQL text column, losslessly. PostgreSQL refuses NUL
// and invalid UTF-8 in text (SQLSTATE 22021), and model-provided text (a path in the audit,
// a conversation id) and names found on disk (a file a command created) may carry both;
// SQLite stores them as given.
//
// The rule: each NUL byte, each byte of invalid UTF-8, and each byte of textEscape itself
// becomes textEscape followed by the byte's two lowercase hex digits; everything else is
// unchanged (so ordinary text is stored as is). fromPGText undoes it. The mapping goes byte
// by byte and never touches '/', so a folder's prefix "dir/" stays a prefix of its files'
// escaped paths and the SQL prefix comparisons (underOrAt, LocksUnder) hold.
func pgText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 && !strings.Contains(s, textEscape) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == 0 || (r == utf8.RuneError && n == 1) || s[i:i+n] == textEscape {
			for _, c := range []byte(s[i : i+n]) {
				b.WriteString(textEscape)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			}
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"

// fromPGText undoes pgText.
func fromPGText(s string) string {
	if !strings.Contains(s, textEscape) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if rest := s[i:]; strings.HasPrefix(rest, textEscape) && len(rest) >= len(textEscape)+2 {
			n := len(textEscape)
			hi, lo := strings.IndexByte(hexDigits, rest[n]), strings.IndexByte(hexDigits, rest[n+1])
			if hi >= 0 && lo >= 0 {
				b.WriteByte(byte(hi<<4 | lo))
				i += len(textEscape) + 2
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// Unavailable reports whether err is PostgreSQL refusing a connection or ending one: too many
// clients (53300, for the server, a database or a role), a connection failure (class 08),
// the server shutting down or starting (57P01-57P03), or a connection that could not be
// made at all. A caller may retry later; nothing about the request was wrong.
func Unavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "53300" || strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce)
}

// retryable reports whether a transaction that failed with err may simply run again:
// PostgreSQL's serialization failure (40001) and deadlock (40P01), where the server chose
// this transaction as the one to roll back. SQLite has no such case: busy_timeout already
// waited for the write lock, and an error after it is reported.
func (d dialect) retryable(err error) bool {
	var pe *pgconn.PgError
	return d == Postgres && errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}
