package sqlite

import (
	"context"
	"errors"
	"strings"

	"github.com/fileshed/fileshed/core"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/fileshed/fileshed/core/sqlq"
)

// sqlError maps what sqlq and SQLite answered to the catalogue (messages never carry a
// host path).
func (s *Tools) sqlError(err error, d *dbFile) error {
	if err == nil {
		return nil
	}
	if _, ok := core.AsError(err); ok {
		return err
	}
	shown := d.shown
	var fe *sqlq.ForbiddenError
	var ce *sqlq.CSVError
	var se *sqlite.Error
	switch {
	case errors.As(err, &fe) && fe.Write && d.roErr != nil:
		e := *d.roErr
		e.Details = map[string]any{"path": shown, "operation": fe.What}
		return &e
	case errors.As(err, &fe):
		return core.Errf(core.SQLForbidden, "SQL operation '%s' is not allowed", fe.What).With("operation", fe.What).With("path", shown).Because(err)
	case errors.Is(err, context.DeadlineExceeded):
		return core.Errf(core.Timeout, "SQL statement stopped after %d s", s.Config().ExecTimeoutDefault).With("path", shown).
			With("timeout", s.Config().ExecTimeoutDefault).Because(err).
			WithHint("Add a WHERE clause, a LIMIT or an index; the bound is exec_timeout_default (shed_info action=parameters)")
	case errors.Is(err, sqlq.ErrTableExists):
		return core.Errf(core.TableExists, "Table '%s' already exists", d.table).With("table", d.table).With("path", shown)
	case errors.As(err, &ce):
		return csvError(ce, shown)
	case errors.As(err, &se):
		return s.sqliteCodeError(se, d)
	}
	return core.Errf(core.ExecError, "SQLite error: %s", s.scrub(err.Error(), d)).With("path", shown).Because(err).WithHint(sqlHint)
}

// notADatabaseHint is the hint of a file that is not a usable database (EXEC_ERROR, as
// every SQLite failure in the original).
const notADatabaseHint = "The file is not a usable SQLite database: check it with shed_file_type; to load a CSV use import_csv"

// sqlHint is the hint of an SQL error (EXEC_ERROR, the original's code for every SQLite
// failure).
const sqlHint = "Check your SQL syntax and the table names: query=\"SELECT name FROM sqlite_master\" lists them, PRAGMA table_info(t) the columns"

// sqliteCodeError maps SQLite's result codes.
func (s *Tools) sqliteCodeError(se *sqlite.Error, d *dbFile) error {
	msg := s.scrub(se.Error(), d)
	e := core.Errf(core.ExecError, "SQLite query failed: %s", msg).With("path", d.shown).Because(se).WithHint(sqlHint)
	if strings.Contains(msg, "unsafe use of") {
		// trusted_schema=OFF: a view, trigger or default in the file calls a function
		// that is not marked innocuous; SQLite refuses it before the authorizer sees it.
		return core.Errf(core.SQLForbidden, "The database's schema calls a function that is refused here: %s", msg).
			With("operation", "function in a view or trigger").With("path", d.shown).Because(se).
			WithHint("Query the tables directly instead of the view or trigger that calls it")
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL:
		return core.Errf(core.QuotaExceeded, "The database would grow past the quota or max_file_size_mb").With("path", d.shown).Because(se).
			WithHint("Free space with shed_delete (see shed_info action=stats), or delete rows and VACUUM")
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return e.WithHint("Another call or command is writing this database: retry in a moment")
	case sqlite3.SQLITE_INTERRUPT:
		return core.Errf(core.Timeout, "SQL statement stopped after %d s", s.Config().ExecTimeoutDefault).With("path", d.shown).Because(se).
			WithHint("Add a WHERE clause, a LIMIT or an index; the bound is exec_timeout_default (shed_info action=parameters)")
	case sqlite3.SQLITE_READONLY:
		if d.roErr != nil {
			c := *d.roErr
			c.Details = map[string]any{"path": d.shown}
			return &c
		}
	case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
		return e.WithHint(notADatabaseHint)
	case sqlite3.SQLITE_TOOBIG:
		return e.WithHint("Values are limited to %d MB (half of sqlite_memory_mb): select a part with substr() or length()", sqlq.MaxValue()>>20)
	case sqlite3.SQLITE_NOMEM:
		mb := s.Config().SQLiteMemoryMB
		return core.Errf(core.ExecError, "The statement needs more than the %d MB of memory one shed_sqlite call may use", mb).With("path", d.shown).
			With("limit", "sqlite_memory_mb").With("limit_mb", mb).Because(se).
			WithHint("Select fewer or smaller values (substr(), length()), add WHERE or LIMIT, or an index for ORDER BY, GROUP BY and DISTINCT: sorting and temporary tables are held in this memory")
	}
	return e
}

// scrub removes host paths from a SQLite message.
func (s *Tools) scrub(msg string, d *dbFile) string {
	if d.m != nil {
		msg = strings.ReplaceAll(msg, d.m.Dir+"/", "")
	}
	return strings.ReplaceAll(strings.ReplaceAll(msg, d.z.Fs().Dir()+"/", ""), s.Base(), "")
}

// csvError maps an import refusal.
func csvError(ce *sqlq.CSVError, shown string) *core.Error {
	switch ce.Kind {
	case sqlq.CSVEmpty:
		return core.Errf(core.CSVEmpty, "CSV file is empty (no data rows)").With("csv", shown)
	case sqlq.CSVTooWide:
		return core.Errf(core.CSVTooWide, "CSV has too many columns (%d)", ce.Columns).With("csv", shown).With("columns", ce.Columns).
			With("max", sqlq.MaxColumns)
	case sqlq.CSVBadOption:
		return core.Errf(core.InvalidParameter, "%s", ce.Msg).With("csv", shown).
			WithHint("Fix the option (see shed_help howto='csv_to_sqlite'), or leave it out to detect it")
	case sqlq.CSVMismatch:
		return core.Errf(core.ExecError, "%s", ce.Msg).With("csv", shown).
			WithHint("Use if_exists='replace', or import into a new table and INSERT ... SELECT the columns you need")
	}
	e := core.Errf(core.CSVParseError, "Failed to parse CSV: %s", ce.Msg).With("csv", shown)
	if ce.Line > 0 {
		e.With("line", ce.Line)
	}
	if strings.Contains(ce.Msg, "UTF-8") {
		e.WithHint("Give the file's encoding, e.g. encoding='cp1252' or encoding='latin-1'")
	}
	return e
}
