package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/fileshed/fileshed/core/sqlq"
)

// SQLiteInput is the input of shed_sqlite (reference §5.26).
type SQLiteInput struct {
	ZoneArgs
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
// import into one of its tables. Guard rails are SQLite's own (core/sqlq); around them
// this method confines the file, serialises writers of the same file, bounds the file by
// the quota (max_page_count) and settles the real growth, and commits the file in
// versioned zones.
func (s *Service) SQLite(ctx context.Context, c Caller, in SQLiteInput) (Result, error) {
	release, err := s.sqliteSlot(ctx, c)
	if err != nil {
		return Result{}, err
	}
	defer release()
	if in.ImportCSV != "" && strings.TrimSpace(in.Query) != "" {
		return Result{}, Errf(InvalidParameter, "Cannot use both 'import_csv' and 'query' parameters").
			WithHint("Use import_csv for CSV import OR query for SQL execution, not both")
	}
	if in.ImportCSV != "" {
		return s.sqliteImport(ctx, c, in)
	}
	if strings.TrimSpace(in.Query) == "" {
		return Result{}, Errf(MissingParameter, "Either 'query' or 'import_csv' parameter is required").With("parameter", "query").
			WithHint("Provide a SQL query or a CSV file to import")
	}
	return s.sqliteQuery(ctx, c, in)
}

// sqliteSlot takes one of the caller's command slots for a shed_sqlite call: a statement
// costs CPU and up to sqlite_memory_mb like a command, so the same fair share bounds them
// (exec_max_per_user, exec_max_total, exec_memory_total_mb; TOO_MANY_COMMANDS).
func (s *Service) sqliteSlot(ctx context.Context, c Caller) (func(), error) {
	release, err := s.acquireSlot(ctx, c.UserID)
	if e, ok := AsError(err); ok && e.Code == TooManyCommands && e.Hint == defaultHint(TooManyCommands) {
		e.WithHint("Wait a few seconds for your running commands and shed_sqlite calls to finish, then call shed_sqlite again")
	}
	return release, err
}

// dbFile is the database of one call, confined and checked.
type dbFile struct {
	z      *Zone
	rel    string
	shown  string
	host   string
	before fileState
	// roErr, when set, opens the database read-only and is the answer to a write.
	roErr *Error
	table string // of an import, for messages
	bulk  bool   // an import: one big transaction
	// m is the decrypted copy of the database and its journals in an encrypted zone:
	// host names it, and what a write changed goes back encrypted.
	m *mirror
}

// decrypt gives the database of an encrypted zone, with its journals, a decrypted copy
// that d.host then names. A writer calls it under the file's write lock: a copy taken before
// would miss what the writer ahead of it commits.
func (s *Service) decrypt(d *dbFile) error {
	if !d.z.Fs.Sealed() || d.m != nil {
		return nil
	}
	names := []string{d.rel}
	for _, j := range journals {
		names = append(names, d.rel+j)
	}
	m, err := s.openMirror(d.z.Fs, names)
	if err != nil {
		return err
	}
	d.m, d.host = m, filepath.Join(m.dir, filepath.FromSlash(d.rel))
	d.before = d.state()
	return nil
}

// close removes the decrypted copy (if any) and closes the zone.
func (d *dbFile) close() {
	if d.m != nil {
		d.m.remove()
	}
	d.z.Close()
}

// fileState is what a call measures of the database and its journals.
type fileState struct {
	exists bool
	size   int64 // the database file
	extra  int64 // -wal and -journal
	mtime  time.Time
}

// journals are the files SQLite keeps beside a database.
var journals = []string{"-wal", "-journal", "-shm"}

// sqliteFile resolves and checks the database path: inside the zone, not a symlink, a
// regular file (or missing), its journals regular files too, and SQLite content.
func (s *Service) sqliteFile(ctx context.Context, c Caller, in SQLiteInput) (*dbFile, error) {
	z, rel, err := s.zonePath(ctx, c, in.ZoneArgs, in.Path, false)
	if err != nil {
		return nil, err
	}
	d := &dbFile{z: z, rel: rel, shown: in.Path}
	if err := d.check(); err != nil {
		z.Close()
		return nil, err
	}
	return d, nil
}

func (d *dbFile) check() error {
	z, rel, shown := d.z, d.rel, d.shown
	if rel == "" {
		return Errf(NotAFile, "Path is a directory, not a file: %s", shown).With("path", shown).With("zone", z.Label)
	}
	if _, err := z.Fs.Confined(rel); err != nil {
		return writeError(err, z, shown)
	}
	for _, suffix := range append([]string{""}, journals...) {
		fi, _, err := z.Fs.LstatIfPossible(rel + suffix)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return writeError(err, z, shown)
		case fi.Mode()&fs.ModeSymlink != 0:
			return Errf(InvalidPath, "The database %s is a symbolic link", shown+suffix).With("path", shown).With("zone", z.Label).
				WithHint("Open the database file itself, not a link to it")
		case fi.IsDir():
			return Errf(NotAFile, "Path is a directory, not a file: %s", shown+suffix).With("path", shown).With("zone", z.Label)
		case !fi.Mode().IsRegular():
			return Errf(NotAFile, "Not a regular file: %s (%s)", shown+suffix, fileKind(fi.Mode())).With("path", shown).With("zone", z.Label).
				WithHint("A database must be a regular file; see shed_tree")
		}
	}
	d.host = filepath.Join(z.Fs.Dir(), filepath.FromSlash(rel))
	d.before = d.state()
	if d.before.exists && d.before.size > 0 {
		f, _, err := openRegular(z, rel, shown, func(*Zone, string) error { return nil })
		if err != nil {
			return err
		}
		head := make([]byte, 16)
		n, _ := io.ReadFull(f, head)
		_ = f.Close()
		if string(head[:n]) != sqliteMagic {
			return Errf(DBError, "Not an SQLite database: %s", shown).With("path", shown).With("zone", z.Label).
				WithHint("Check the file with shed_file_type; to load a CSV use import_csv")
		}
	}
	return nil
}

// notItself refuses a CSV path (param) that is the database or one of its journals.
func (d *dbFile) notItself(rel, param string) error {
	for _, suffix := range append([]string{""}, journals...) {
		if rel == d.rel+suffix {
			return Errf(InvalidParameter, "'%s' is the database itself: %s", param, rel).With("parameter", param).
				WithHint("Use another file name for the CSV, e.g. 'export.csv'")
		}
	}
	return nil
}

// state measures the database and its journals now.
func (d *dbFile) state() fileState {
	var st fileState
	if fi, err := os.Lstat(d.host); err == nil {
		st.exists, st.size, st.mtime = true, fi.Size(), fi.ModTime()
	}
	for _, j := range []string{"-wal", "-journal"} {
		if fi, err := os.Lstat(d.host + j); err == nil && fi.Mode().IsRegular() {
			st.extra += fi.Size()
		}
	}
	return st
}

// exists reports whether a host path exists (without following a final symlink).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// changed reports whether the database file differs from the start of the call.
func (d *dbFile) changed(now fileState) bool {
	b := d.before
	return now.exists != b.exists || now.size != b.size || !now.mtime.Equal(b.mtime)
}

// sqlTimeout bounds every statement (and an import) of a call.
func (s *Service) sqlTimeout() time.Duration {
	return time.Duration(s.cfg.ExecTimeoutDefault) * time.Second
}

// withDB opens the database and runs fn with a context bounded by the SQL timeout. Read-only (d.roErr set), the file is opened with
// mode=ro and nothing else happens. Otherwise the file's writers are serialised, the
// database may grow only as far as the owner's quota and max_file_size_mb allow (SQLite
// refuses the write past that: SQLITE_FULL), the real change of the file and its journals
// is settled after, and in versioned zones the file is checkpointed, closed and committed
// when it changed.
func (s *Service) withDB(ctx context.Context, c Caller, d *dbFile, message string, fn func(context.Context, *sqlq.DB) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.sqlTimeout())
	defer cancel()
	// A lock held by another writer (a shed_exec sqlite3) is waited for up to half the
	// timeout, so that the answer is "busy", not a timeout.
	opts := sqlq.Options{BusyMillis: int(min(5*time.Second, s.sqlTimeout()/2).Milliseconds())}
	z := d.z
	if d.roErr == nil || z.Kind == GroupZone {
		// Every writer holds the file's lock; in group zones readers too, so that no
		// connection of ours is open while the companions are swept.
		unlock := s.lockPath(z, d.rel)
		defer unlock()
	}
	if err := s.sweepCompanions(ctx, d); err != nil {
		return err
	}
	if d.roErr != nil {
		if !d.before.exists {
			return Errf(FileNotFound, "Database not found: %s", d.shown).With("path", d.shown).With("zone", d.z.Label).
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
	if err := s.ensureUsage(ctx, z.Owner); err != nil {
		return Errf(InternalError, "Cannot read the quota").Because(err)
	}
	r, err := s.reserve(ctx, z, -1, 0)
	if err != nil {
		return err
	}
	d.before = d.state() // under the file's lock
	delta := int64(0)
	defer func() { r.Settle(ctx, delta) }()
	used, err := s.db.Usage(ctx, z.Owner)
	if err != nil {
		return Errf(InternalError, "Cannot read the quota").Because(err)
	}
	opts.Create, opts.JournalMode = true, s.cfg.SQLiteJournalMode
	if d.bulk && !d.before.exists && opts.JournalMode == "wal" {
		// A new database filled in one transaction: a rollback journal writes each page
		// once, where WAL writes it to the log and again at the checkpoint. WAL is set
		// after the load.
		opts.JournalMode = "delete"
	}
	// The database may grow into the owner's free quota, up to max_file_size_mb, and never
	// has to shrink to pass (at least one page: a new database without room stays empty).
	opts.MaxBytes = max(min(d.before.size+max(s.limit(z.Owner)-used, 0), int64(s.cfg.MaxFileSizeMB)<<20), d.before.size, 1)
	created := false
	_, err = s.mutateFile(c, z, "shed_sqlite", message, func() (Change, error) {
		if dir := path.Dir(d.rel); dir != "." {
			if err := z.Fs.MkdirAll(dir, 0o700); err != nil {
				return Change{}, writeError(err, z, d.shown)
			}
			if d.m != nil { // and in the decrypted copy, where SQLite creates the file
				if err := d.m.fs.MkdirAll(dir, 0o700); err != nil {
					return Change{}, writeError(err, z, d.shown)
				}
			}
		}
		db, err := sqlq.Open(ctx, d.host, opts)
		if err != nil {
			return Change{}, s.sqlError(err, d)
		}
		runErr := fn(ctx, db)
		if runErr == nil && opts.JournalMode != s.cfg.SQLiteJournalMode {
			runErr = db.SetJournalMode(ctx, s.cfg.SQLiteJournalMode)
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
			closeErr = d.m.writeBack(nil) // encrypted zone: the changed copy goes back encrypted
		}
		delta = after.size + after.extra - d.before.size - d.before.extra
		if err := errors.Join(runErr, closeErr); err != nil {
			return Change{}, s.sqlError(err, d)
		}
		if !d.changed(after) {
			return Change{}, nil
		}
		created = !d.before.exists && after.exists
		return Change{Paths: []string{d.rel}}, nil
	})
	if err == nil && created {
		err = s.recordGroupFiles(ctx, c, z, "", d.rel)
	}
	return err
}

// sqlError maps what sqlq and SQLite answered to the catalogue (messages never carry a
// host path).
func (s *Service) sqlError(err error, d *dbFile) error {
	if err == nil {
		return nil
	}
	if _, ok := AsError(err); ok {
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
		return Errf(SQLForbidden, "SQL operation '%s' is not allowed", fe.What).With("operation", fe.What).With("path", shown).Because(err)
	case errors.Is(err, context.DeadlineExceeded):
		return Errf(Timeout, "SQL statement stopped after %d s", s.cfg.ExecTimeoutDefault).With("path", shown).
			With("timeout", s.cfg.ExecTimeoutDefault).Because(err).
			WithHint("Add a WHERE clause, a LIMIT or an index; the bound is exec_timeout_default (shed_info action=parameters)")
	case errors.Is(err, sqlq.ErrTableExists):
		return Errf(TableExists, "Table '%s' already exists", d.table).With("table", d.table).With("path", shown)
	case errors.As(err, &ce):
		return csvError(ce, shown)
	case errors.As(err, &se):
		return s.sqliteCodeError(se, d)
	}
	return Errf(ExecError, "SQLite error: %s", s.scrub(err.Error(), d)).With("path", shown).Because(err).WithHint(sqlHint)
}

// sqlHint is the hint of an SQL error (EXEC_ERROR, the original's code for every SQLite
// failure; DB_ERROR is kept for a file that is not a usable database).
const sqlHint = "Check your SQL syntax and the table names: query=\"SELECT name FROM sqlite_master\" lists them, PRAGMA table_info(t) the columns"

// sqliteCodeError maps SQLite's result codes.
func (s *Service) sqliteCodeError(se *sqlite.Error, d *dbFile) error {
	msg := s.scrub(se.Error(), d)
	e := Errf(ExecError, "SQLite query failed: %s", msg).With("path", d.shown).Because(se).WithHint(sqlHint)
	if strings.Contains(msg, "unsafe use of") {
		// trusted_schema=OFF: a view, trigger or default in the file calls a function
		// that is not marked innocuous; SQLite refuses it before the authorizer sees it.
		return Errf(SQLForbidden, "The database's schema calls a function that is refused here: %s", msg).
			With("operation", "function in a view or trigger").With("path", d.shown).Because(se).
			WithHint("Query the tables directly instead of the view or trigger that calls it")
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL:
		return Errf(QuotaExceeded, "The database would grow past the quota or max_file_size_mb").With("path", d.shown).Because(se).
			WithHint("Free space with shed_delete (see shed_info action=stats), or delete rows and VACUUM")
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return e.WithHint("Another call or command is writing this database: retry in a moment")
	case sqlite3.SQLITE_INTERRUPT:
		return Errf(Timeout, "SQL statement stopped after %d s", s.cfg.ExecTimeoutDefault).With("path", d.shown).Because(se).
			WithHint("Add a WHERE clause, a LIMIT or an index; the bound is exec_timeout_default (shed_info action=parameters)")
	case sqlite3.SQLITE_READONLY:
		if d.roErr != nil {
			c := *d.roErr
			c.Details = map[string]any{"path": d.shown}
			return &c
		}
	case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
		return Errf(DBError, "Not a usable SQLite database: %s", msg).With("path", d.shown).Because(se)
	case sqlite3.SQLITE_TOOBIG:
		return e.WithHint("Values are limited to %d MB (half of sqlite_memory_mb): select a part with substr() or length()", sqlq.MaxValue()>>20)
	case sqlite3.SQLITE_NOMEM:
		mb := s.cfg.SQLiteMemoryMB
		return Errf(ExecError, "The statement needs more than the %d MB of memory one shed_sqlite call may use", mb).With("path", d.shown).
			With("limit", "sqlite_memory_mb").With("limit_mb", mb).Because(se).
			WithHint("Select fewer or smaller values (substr(), length()), add WHERE or LIMIT, or an index for ORDER BY, GROUP BY and DISTINCT: sorting, temporary tables and VACUUM are held in this memory")
	}
	return e
}

// scrub removes host paths from a SQLite message.
func (s *Service) scrub(msg string, d *dbFile) string {
	if d.m != nil {
		msg = strings.ReplaceAll(msg, d.m.dir+"/", "")
	}
	return strings.ReplaceAll(strings.ReplaceAll(msg, d.z.Fs.Dir()+"/", ""), s.base, "")
}

// csvError maps an import refusal.
func csvError(ce *sqlq.CSVError, shown string) *Error {
	switch ce.Kind {
	case sqlq.CSVEmpty:
		return Errf(CSVEmpty, "CSV file is empty (no data rows)").With("csv", shown)
	case sqlq.CSVTooWide:
		return Errf(CSVTooWide, "CSV has too many columns (%d)", ce.Columns).With("csv", shown).With("columns", ce.Columns).
			With("max", sqlq.MaxColumns)
	case sqlq.CSVBadOption:
		return Errf(InvalidParameter, "%s", ce.Msg).With("csv", shown).
			WithHint("Fix the option (see shed_help howto='csv_to_sqlite'), or leave it out to detect it")
	case sqlq.CSVMismatch:
		return Errf(ExecError, "%s", ce.Msg).With("csv", shown).
			WithHint("Use if_exists='replace', or import into a new table and INSERT ... SELECT the columns you need")
	}
	e := Errf(CSVParseError, "Failed to parse CSV: %s", ce.Msg).With("csv", shown)
	if ce.Line > 0 {
		e.With("line", ce.Line)
	}
	if strings.Contains(ce.Msg, "UTF-8") {
		e.WithHint("Give the file's encoding, e.g. encoding='cp1252' or encoding='latin-1'")
	}
	return e
}

// limitClause tells whether the SQL names its own LIMIT (then the call's default is the
// maximum, as the original answered all rows of such a query).
var limitClause = regexp.MustCompile(`(?i)\bLIMIT\s+\d+`)

// rowCap is how many rows a query answers.
func (s *Service) rowCap(in SQLiteInput) int {
	maxRows := s.cfg.SQLiteRowsMax
	switch {
	case in.Limit == 0:
		return maxRows
	case in.Limit > 0:
		return min(in.Limit, maxRows)
	case limitClause.MatchString(in.Query):
		return maxRows
	}
	return min(s.cfg.SQLiteRowsDefault, maxRows)
}

// sqliteQuery is query mode.
func (s *Service) sqliteQuery(ctx context.Context, c Caller, in SQLiteInput) (Result, error) {
	stmt, err := sqlq.Single(in.Query)
	if errors.Is(err, sqlq.ErrEmpty) {
		return Result{}, Errf(InvalidParameter, "The query holds no SQL statement, only comments, ';' or white space").With("parameter", "query").
			WithHint("Give one SQL statement, e.g. query=\"SELECT name FROM sqlite_master\"")
	}
	if err != nil {
		return Result{}, Errf(InvalidParameter, "Only one SQL statement per call: %v", err).With("parameter", "query").
			WithHint("Send each statement in its own shed_sqlite call")
	}
	params := in.Params
	if p, ok := params.(string); ok && (strings.HasPrefix(strings.TrimSpace(p), "[") || strings.HasPrefix(strings.TrimSpace(p), "{")) {
		params = decodeJSON(p)
	}
	args, err := sqlq.Args(params)
	if err != nil {
		return Result{}, Errf(InvalidParameter, "Parameter 'params': %v", err).With("parameter", "params")
	}
	d, err := s.sqliteFile(ctx, c, in)
	if err != nil {
		return Result{}, err
	}
	defer d.close()
	z := d.z
	var out *csvOut
	if in.OutputCSV != "" {
		if z.ReadOnly {
			return Result{}, Errf(ZoneReadonly, "Cannot export CSV to read-only zone").With("zone", z.Label).With("output_csv", in.OutputCSV).
				WithHint("Use 'storage' or 'documents' zone for CSV export")
		}
		if out, err = s.newCSVOut(ctx, c, z, in.OutputCSV); err != nil {
			return Result{}, err
		}
		if err := d.notItself(out.rel, "output_csv"); err != nil {
			out.discard()
			return Result{}, err
		}
		defer out.discard()
	}
	switch {
	case z.ReadOnly:
		d.roErr = Errf(ZoneForbidden, "Write operations not allowed in Uploads zone").
			WithHint("Move the database to Storage or Documents first (shed_transfer action=uploads_to_storage)")
	case s.cfg.SQLiteReadonly:
		d.roErr = Errf(CommandForbidden, "Write operations are disabled (sqlite_readonly=True)").
			WithHint("Only queries that read are allowed. Ask an administrator to disable sqlite_readonly")
	default:
		kind := writeModify
		if !d.before.exists {
			kind = writeCreate
		}
		if err := s.checkGroupWrite(ctx, c, z, kind, d.rel); err != nil {
			if e, ok := AsError(err); ok && d.before.exists {
				d.roErr = e // reading stays possible
			} else {
				return Result{}, err
			}
		}
	}
	lim := sqlq.Limits{Rows: s.rowCap(in), Bytes: s.cfg.MaxOutputDefault, Cell: min(sqlCellBytes, s.cfg.MaxOutputDefault), Blob: sqlBlobBytes,
		Count: s.cfg.SQLiteRowsMax}
	var ans *sqlq.Answer
	var each func([]string, []any) error
	if out != nil {
		each = out.row
	}
	err = s.withDB(ctx, c, d, "shed_sqlite: "+shorten(oneLine(stmt)), func(ctx context.Context, db *sqlq.DB) error {
		var err error
		ans, err = db.Run(ctx, stmt, args, lim, each)
		return err
	})
	if err != nil {
		return Result{}, err
	}
	if out != nil && ans.ReturnsRows {
		return s.finishCSVOut(ctx, c, out, d, in, ans)
	}
	data := map[string]any{"path": d.rel, "query": in.Query}
	if !ans.ReturnsRows {
		data["rows_affected"], data["last_row_id"] = ans.RowsAffected, ans.LastInsertID
		return Result{Data: data, Message: fmt.Sprintf("Query executed successfully (%d row(s) affected)", ans.RowsAffected)}, nil
	}
	data["columns"], data["rows"], data["row_count"], data["truncated"] = ans.Columns, ans.Rows, len(ans.Rows), ans.Truncated
	msg := fmt.Sprintf("Query returned %d row(s)", len(ans.Rows))
	if ans.Truncated {
		data["limit_applied"], data["total_rows"], data["total_rows_capped"] = lim.Rows, ans.Total, ans.TotalCapped
		total := fmt.Sprint(ans.Total)
		if ans.TotalCapped {
			total = "at least " + total
		}
		msg = fmt.Sprintf("Showing the first %d of %s row(s). Add LIMIT/WHERE to the SQL, raise limit (max %d), or use output_csv='results.csv' to export all rows",
			len(ans.Rows), total, s.cfg.SQLiteRowsMax)
		if len(ans.Rows) < lim.Rows {
			msg = fmt.Sprintf("Showing the first %d of %s row(s): the answer reached its size cap (%d bytes). Select fewer or shorter columns, or use output_csv='results.csv' to export all rows",
				len(ans.Rows), total, lim.Bytes)
		}
	}
	return Result{Data: data, Message: msg}, nil
}

// oneLine folds white space, for commit messages.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
