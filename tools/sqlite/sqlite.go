package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/sqlq"
)

// SQLiteInput is the input of shed_sqlite (reference §5.26).
type SQLiteInput struct {
	core.ZoneArgs
	Path        string   `json:"path" required:"true"`
	Query       string   `json:"query,omitempty"`
	Params      any      `json:"params,omitempty" doc:"List for ?, object for :name"`
	Limit       int      `json:"limit,omitempty" minimum:"0" absent:"-1" doc:"Rows (default 10, 0=max)"`
	OutputCSV   string   `json:"output_csv,omitempty" doc:"Save ALL rows to this CSV"`
	ImportCSV   string   `json:"import_csv,omitempty"`
	Table       string   `json:"table,omitempty"`
	IfExists    string   `json:"if_exists,omitempty" absent:"fail" enum:"fail,replace,append"`
	Delimiter   string   `json:"delimiter,omitempty"`
	Encoding    string   `json:"encoding,omitempty"`
	DateColumns []string `json:"date_columns,omitempty"`
	DateFormat  string   `json:"date_format,omitempty"`
	Decimal     string   `json:"decimal,omitempty"`
	SkipRows    int      `json:"skip_rows,omitempty"`
	HasHeader   bool     `json:"has_header,omitempty" absent:"true"`
}

// The bounds of an answer's values (the row count comes from the valves, the byte total
// from max_output_default).
const (
	sqlCellBytes = 4000
	sqlBlobBytes = 64
)

// SQLite answers shed_sqlite: one SQL statement on a database file of the zone, or a CSV
// import into one of its tables. Guard rails are SQLite's own (core/sqlq: authorizer,
// limits, a heap bound per connection); around them this method takes a command slot,
// confines the file, serialises writers of the same file (readers too in groups, where the
// database's stray companions are swept first), bounds the file by the quota
// (max_page_count) and settles the real growth, and commits the file in versioned zones.
func (s *Tools) SQLite(ctx context.Context, c core.Caller, in SQLiteInput) (core.Result, error) {
	release, err := s.sqliteSlot(ctx, c)
	if err != nil {
		return core.Result{}, err
	}
	defer release()
	if in.ImportCSV != "" && strings.TrimSpace(in.Query) != "" {
		return core.Result{}, core.Errf(core.InvalidParameter, "Cannot use both 'import_csv' and 'query' parameters").
			WithHint("Use import_csv for CSV import OR query for SQL execution, not both")
	}
	if in.ImportCSV != "" {
		return s.sqliteImport(ctx, c, in)
	}
	if strings.TrimSpace(in.Query) == "" {
		return core.Result{}, core.Errf(core.MissingParameter, "Either 'query' or 'import_csv' parameter is required").With("parameter", "query").
			WithHint("Provide a SQL query or a CSV file to import")
	}
	return s.sqliteQuery(ctx, c, in)
}

// sqliteSlot takes one of the caller's command slots for a shed_sqlite call: a statement
// costs CPU and up to sqlite_memory_mb like a command, so the same fair share bounds them
// (exec_max_per_user, exec_max_total, exec_memory_total_mb; TOO_MANY_COMMANDS).
func (s *Tools) sqliteSlot(ctx context.Context, c core.Caller) (func(), error) {
	return s.AcquireSlot(ctx, c.UserID, core.SqliteCallSlot)
}

// sqlTimeout bounds every statement (and an import) of a call.
func (s *Tools) sqlTimeout() time.Duration {
	return time.Duration(s.Config().ExecTimeoutDefault) * time.Second
}

// withDB opens the database and runs fn with a context bounded by the SQL timeout. Read-only (d.roErr set), the file is opened with
// mode=ro and nothing else happens. Otherwise the file's writers are serialised, the
// database may grow only as far as the owner's quota and max_file_size_mb allow (SQLite
// refuses the write past that: SQLITE_FULL), the real change of the file and its journals
// is settled after, and in versioned zones the file is checkpointed, closed and committed
// when it changed.
func (s *Tools) withDB(ctx context.Context, c core.Caller, d *dbFile, message string, fn func(context.Context, *sqlq.DB) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.sqlTimeout())
	defer cancel()
	// A lock held by another writer (a shed_exec sqlite3) is waited for up to half the
	// timeout, so that the answer is "busy", not a timeout.
	opts := sqlq.Options{BusyMillis: int(min(5*time.Second, s.sqlTimeout()/2).Milliseconds())}
	z := d.z
	// Every writer goes through the write transaction (it holds the file's lock); in group
	// zones readers hold the lock too, so that no connection of ours is open while the
	// kernel sweeps the companions of a protected database (core/companions_sweep.go).
	var tx *core.Tx
	switch {
	case d.roErr == nil:
		var err error
		if tx, _, err = s.BeginWrite(ctx, c, z, d.rel, d.shown, core.Edit{Tool: "shed_sqlite", Message: message,
			Quota: &core.Quota{Size: -1, Plan: newDatabase}}); err != nil {
			return err
		}
		defer tx.Close()
		if err := tx.SweepCompanions(); err != nil {
			return err
		}
	case z.Kind == core.GroupZone:
		unlock, err := s.HoldDatabase(ctx, c, z, d.rel, d.shown)
		if err != nil {
			return err
		}
		defer unlock()
	}
	if d.roErr != nil {
		if !d.before.exists {
			return core.Errf(core.FileNotFound, "Database not found: %s", d.shown).With("path", d.shown).With("zone", d.z.Label).
				WithHint("Check the path with shed_tree (read-only here: a new database cannot be created)")
		}
		opts.ReadOnly = true
		if err := s.decrypt(d); err != nil {
			return err
		}
		left := !exists(d.host+"-wal") && !exists(d.host+"-shm")
		db, err := sqlq.Open(ctx, d.host, opts)
		if err != nil {
			return s.sqlError(err, d)
		}
		err = fn(ctx, db)
		_ = db.Close()
		if left && (exists(d.host+"-wal") || exists(d.host+"-shm")) {
			// Why the error is ignored: the files are harmless leftovers of the read.
			_ = sqlq.Tidy(context.WithoutCancel(ctx), d.host)
		}
		return s.sqlError(err, d)
	}
	if err := s.decrypt(d); err != nil {
		return err
	}
	d.before = d.state() // under the file's lock
	used, err := s.State().Usage(ctx, z.Owner)
	if err != nil {
		return core.QuotaErr("Cannot read the quota", err)
	}
	opts.Create, opts.JournalMode = true, s.Config().SQLiteJournal()
	if d.bulk && !d.before.exists && opts.JournalMode == "wal" {
		// A new database filled in one transaction: a rollback journal writes each page
		// once, where WAL writes it to the log and again at the checkpoint. WAL is set
		// after the load.
		opts.JournalMode = "delete"
	}
	// The database may grow into the owner's free quota, up to max_file_size_mb, and never
	// has to shrink to pass (at least one page: a new database without room stays empty).
	opts.MaxBytes = max(min(d.before.size+max(s.Limit(z.Owner).Bytes-used.Bytes, 0), int64(s.Config().MaxFileSizeMB)<<20), d.before.size, 1)
	_, err = tx.Apply(func() (core.Change, error) {
		if dir := path.Dir(d.rel); dir != "." {
			if err := tx.Fs(z).MakeDir(dir); err != nil {
				return core.Change{}, core.WriteError(err, z, d.shown)
			}
			if d.m != nil { // and in the decrypted copy, where SQLite creates the file
				if err := d.m.MkdirAll(dir); err != nil {
					return core.Change{}, core.WriteError(err, z, d.shown)
				}
			}
		}
		db, err := sqlq.Open(ctx, d.host, opts)
		if err != nil {
			return core.Change{}, s.sqlError(err, d)
		}
		runErr := fn(ctx, db)
		if runErr == nil && opts.JournalMode != s.Config().SQLiteJournal() {
			runErr = db.SetJournalMode(ctx, s.Config().SQLiteJournal())
		}
		if runErr == nil && z.Versioned {
			// Why the error is ignored: the change is done in SQLite; a checkpoint that
			// another open connection (a running sqlite3) blocks only leaves the newest
			// pages in the WAL, and the commit takes the file as it is.
			_ = db.Checkpoint(context.WithoutCancel(ctx))
		}
		closeErr := db.Close()
		after := d.state()
		if d.m != nil && closeErr == nil {
			_, _, closeErr = d.m.WriteBack() // encrypted zone: the changed copy goes back encrypted
		}
		delta := core.Amount{Bytes: after.size + after.extra - d.before.size - d.before.extra, Files: after.names - d.before.names}
		if err := errors.Join(runErr, closeErr); err != nil {
			return core.Change{Growth: delta}, s.sqlError(err, d)
		}
		if !d.changed(after) {
			return core.Change{Growth: delta}, nil
		}
		return core.Change{Paths: []string{d.rel}, Growth: delta}, nil
	})
	return err
}

// limitClause tells whether the SQL names its own LIMIT (then the call's default is the
// maximum, as the original answered all rows of such a query).
var limitClause = regexp.MustCompile(`(?i)\bLIMIT\s+\d+`)

// rowCap is how many rows a query answers.
func (s *Tools) rowCap(in SQLiteInput) int {
	maxRows := s.Config().SQLiteRowsMax
	switch {
	case in.Limit == 0:
		return maxRows
	case in.Limit > 0:
		return min(in.Limit, maxRows)
	case limitClause.MatchString(in.Query):
		return maxRows
	}
	return min(s.Config().SQLiteRowsDefault, maxRows)
}

// sqliteQuery is query mode.
func (s *Tools) sqliteQuery(ctx context.Context, c core.Caller, in SQLiteInput) (core.Result, error) {
	stmt, err := sqlq.Single(in.Query)
	if errors.Is(err, sqlq.ErrEmpty) {
		return core.Result{}, core.Errf(core.InvalidParameter, "The query holds no SQL statement, only comments, ';' or white space").With("parameter", "query").
			WithHint("Give one SQL statement, e.g. query=\"SELECT name FROM sqlite_master\"")
	}
	if err != nil {
		return core.Result{}, core.Errf(core.InvalidParameter, "Only one SQL statement per call: %v", err).With("parameter", "query").
			WithHint("Send each statement in its own shed_sqlite call")
	}
	params := in.Params
	if p, ok := params.(string); ok && (strings.HasPrefix(strings.TrimSpace(p), "[") || strings.HasPrefix(strings.TrimSpace(p), "{")) {
		params = decodeJSON(p)
	}
	args, err := sqlq.Args(params)
	if err != nil {
		return core.Result{}, core.Errf(core.InvalidParameter, "Parameter 'params': %v", err).With("parameter", "params")
	}
	d, err := s.sqliteFile(ctx, c, in)
	if err != nil {
		return core.Result{}, err
	}
	defer d.close()
	z := d.z
	var out *csvOut
	if in.OutputCSV != "" {
		if z.ReadOnly {
			return core.Result{}, core.Errf(core.ZoneReadonly, "Cannot export CSV to read-only zone").With("zone", z.Label).With("output_csv", in.OutputCSV).
				WithHint("Use 'storage' or 'documents' zone for CSV export")
		}
		if out, err = s.newCSVOut(ctx, c, z, in.OutputCSV); err != nil {
			return core.Result{}, err
		}
		if err := d.notItself(out.rel, "output_csv"); err != nil {
			out.discard()
			return core.Result{}, err
		}
		defer out.discard()
	}
	switch {
	case z.ReadOnly:
		d.roErr = core.Errf(core.ZoneForbidden, "Write operations not allowed in Uploads zone").
			WithHint("Move the database to Storage or Documents first (shed_transfer action=uploads_to_storage)")
	case s.Config().SQLiteReadonly:
		d.roErr = core.Errf(core.CommandForbidden, "Write operations are disabled (sqlite_readonly=True)").
			WithHint("Only queries that read are allowed. Ask an administrator to disable sqlite_readonly")
	default:
		kind := core.WriteModify
		if !d.before.exists {
			kind = core.WriteCreate
		}
		if err := s.CheckGroupWrite(ctx, c, z, kind, d.rel); err != nil {
			if e, ok := core.AsError(err); ok && d.before.exists {
				d.roErr = e // reading stays possible
			} else {
				return core.Result{}, err
			}
		}
	}
	lim := sqlq.Limits{Rows: s.rowCap(in), Bytes: s.Config().MaxOutputDefault, Cell: min(sqlCellBytes, s.Config().MaxOutputDefault), Blob: sqlBlobBytes,
		Count: s.Config().SQLiteRowsMax}
	var ans *sqlq.Answer
	var each func([]string, []any) error
	if out != nil {
		each = out.row
	}
	err = s.withDB(ctx, c, d, "shed_sqlite: "+core.Shorten(oneLine(stmt)), func(ctx context.Context, db *sqlq.DB) error {
		var err error
		ans, err = db.Run(ctx, stmt, args, lim, each)
		return err
	})
	if err != nil {
		return core.Result{}, err
	}
	if out != nil && ans.ReturnsRows {
		return s.finishCSVOut(ctx, c, out, d, in, ans)
	}
	if !ans.ReturnsRows {
		data := sqlWritten{LastRowID: ans.LastInsertID, Path: d.rel, Query: in.Query, RowsAffected: ans.RowsAffected}
		return core.Result{Data: data, Message: fmt.Sprintf("Query executed successfully (%d row(s) affected)", ans.RowsAffected)}, nil
	}
	data := sqlRows{Columns: ans.Columns, Path: d.rel, Query: in.Query, RowCount: len(ans.Rows), Rows: ans.Rows, Truncated: ans.Truncated}
	msg := fmt.Sprintf("Query returned %d row(s)", len(ans.Rows))
	if ans.Truncated {
		data.LimitApplied, data.TotalRows, data.TotalRowsCapped = &lim.Rows, &ans.Total, &ans.TotalCapped
		total := fmt.Sprint(ans.Total)
		if ans.TotalCapped {
			total = "at least " + total
		}
		msg = fmt.Sprintf("Showing the first %d of %s row(s). Add LIMIT/WHERE to the SQL, raise limit (max %d), or use output_csv='results.csv' to export all rows",
			len(ans.Rows), total, s.Config().SQLiteRowsMax)
		if len(ans.Rows) < lim.Rows {
			msg = fmt.Sprintf("Showing the first %d of %s row(s): the answer reached its size cap (%d bytes). Select fewer or shorter columns, or use output_csv='results.csv' to export all rows",
				len(ans.Rows), total, lim.Bytes)
		}
	}
	return core.Result{Data: data, Message: msg}, nil
}

// sqlWritten is the answer of a statement without result columns (fields in the order of
// the JSON keys, alphabetical, as the map it replaces wrote them).
type sqlWritten struct {
	LastRowID    int64  `json:"last_row_id"`
	Path         string `json:"path"`
	Query        string `json:"query"`
	RowsAffected int64  `json:"rows_affected"`
}

// sqlRows is the answer of a query (fields in the order of the JSON keys, alphabetical, as
// the map it replaces wrote them). rows holds the cells as sqlq renders them (a dynamic
// shape by nature). limit_applied, total_rows and total_rows_capped are there exactly
// when rows were left out (false and 0 included).
type sqlRows struct {
	Columns         []string `json:"columns"`
	LimitApplied    *int     `json:"limit_applied,omitempty"`
	Path            string   `json:"path"`
	Query           string   `json:"query"`
	RowCount        int      `json:"row_count"`
	Rows            [][]any  `json:"rows"`
	TotalRows       *int     `json:"total_rows,omitempty"`
	TotalRowsCapped *bool    `json:"total_rows_capped,omitempty"`
	Truncated       bool     `json:"truncated"`
}

// oneLine folds white space, for commit messages.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// newDatabase is the quota a write of a database needs: a name when the database is new
// (its journals come and go: settled as they are after); its bytes grow into the free
// quota, bounded by the connection and settled after.
func newDatabase(tx *core.Tx) (int64, core.Amount, error) {
	if tx.Target(0).Exists {
		return -1, core.Amount{}, nil
	}
	return -1, core.Amount{Files: 1}, nil
}
