package sqlite

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/sqlq"
)

// sqliteImport is CSV import mode (reference §5.26 A): the CSV of the same zone goes
// into table in one transaction, with the column types inferred (two streaming passes).
// sqlite_readonly does not apply, as in the original.
func (s *Tools) sqliteImport(ctx context.Context, c core.Caller, in SQLiteInput) (core.Result, error) {
	ifExists := strings.ToLower(strings.TrimSpace(in.IfExists))
	switch {
	case in.SkipRows < 0:
		return core.Result{}, core.Errf(core.InvalidParameter, "skip_rows must be 0 or more, got: %d", in.SkipRows).With("parameter", "skip_rows").
			WithHint("Use skip_rows=0 (default) or skip_rows=2 to skip 2 rows")
	case in.Table == "":
		return core.Result{}, core.Errf(core.MissingParameter, "table parameter required for CSV import").With("parameter", "table").
			WithHint("Add table='tablename' parameter")
	case ifExists != "fail" && ifExists != "replace" && ifExists != "append":
		return core.Result{}, core.Errf(core.InvalidParameter, "Invalid if_exists value: %s", in.IfExists).With("parameter", "if_exists").
			WithHint("Use 'fail', 'replace', or 'append'")
	case strings.EqualFold(strings.TrimSpace(in.Zone), "uploads"):
		return core.Result{}, core.Errf(core.ZoneForbidden, "CSV import not allowed in Uploads zone").With("zone", "uploads").
			WithHint("Move the CSV to Storage or Documents first (shed_transfer action=uploads_to_storage), then import")
	case !sqlq.ValidTable(in.Table):
		return core.Result{}, core.Errf(core.InvalidParameter, "Invalid table name").With("table", in.Table).With("parameter", "table").
			WithHint("Table name must be alphanumeric with underscores, starting with letter or underscore (not sqlite_)")
	}
	d, err := s.sqliteFile(ctx, c, in)
	if err != nil {
		return core.Result{}, err
	}
	defer d.close()
	z := d.z
	d.table, d.bulk = in.Table, true
	csvRel, err := z.Path(in.ImportCSV, in.AllowZoneInPath)
	if err != nil {
		return core.Result{}, err
	}
	if err := d.notItself(csvRel, "import_csv"); err != nil {
		return core.Result{}, err
	}
	open := func() (io.ReadCloser, error) {
		f, _, err := core.OpenRegular(z, csvRel, in.ImportCSV, func(z *core.Zone, p string) error {
			return core.Errf(core.NotAFile, "Path is a directory, not a file: %s", p).With("path", p).With("zone", z.Label)
		})
		if e, ok := core.AsError(err); ok && e.Code == core.FileNotFound {
			return nil, core.Errf(core.FileNotFound, "CSV file not found: %s", in.ImportCSV).With("csv", in.ImportCSV).With("zone", z.Label).
				WithHint("Check the path is correct and relative to the zone (shed_tree)")
		}
		return f, err
	}
	f, err := open() // refuse a missing CSV before touching the database
	if err != nil {
		return core.Result{}, err
	}
	_ = f.Close()
	kind := core.WriteModify
	if !d.before.exists {
		kind = core.WriteCreate
	}
	if err := s.CheckGroupWrite(ctx, c, z, kind, d.rel); err != nil {
		return core.Result{}, err
	}
	opts := sqlq.ImportOptions{Table: in.Table, IfExists: ifExists, Delimiter: in.Delimiter, Encoding: in.Encoding,
		HasHeader: in.HasHeader, SkipRows: in.SkipRows, DateColumns: in.DateColumns, DateFormat: in.DateFormat, Decimal: in.Decimal}
	var rep *sqlq.ImportReport
	err = s.withDB(ctx, c, d, fmt.Sprintf("shed_sqlite: import %s into %s", csvRel, in.Table), func(ctx context.Context, db *sqlq.DB) error {
		var err error
		rep, err = db.Import(ctx, open, opts)
		return err
	})
	if err != nil {
		if e, ok := core.AsError(err); ok && e.Code != core.TableExists && e.Code != core.FileNotFound {
			e.With("csv", in.ImportCSV).With("table", in.Table)
		}
		return core.Result{}, err
	}
	types := map[string]string{}
	for i, col := range rep.Columns {
		types[col] = rep.Types[i]
	}
	info := importInfo{ColumnTypes: types, DateFailures: rep.DateFailures, DetectedDelimiter: rep.Delimiter,
		DetectedEncoding: rep.Encoding, GeneratedColumns: rep.Generated, Method: "streaming"}
	if rep.SkippedCount > 0 {
		info.SkippedCount, info.SkippedLines = rep.SkippedCount, rep.SkippedLines
	}
	data := csvImported{Appended: rep.Appended, Columns: rep.Columns, CSVPath: in.ImportCSV, DBPath: d.rel, IfExists: ifExists,
		ImportInfo: info, RowsImported: rep.Rows, Table: in.Table}
	msg := fmt.Sprintf("Imported %d rows from '%s' into table '%s'", rep.Rows, in.ImportCSV, in.Table)
	if rep.SkippedCount > 0 {
		msg += fmt.Sprintf(" (%d malformed record(s) skipped, first at line %d)", rep.SkippedCount, rep.SkippedLines[0])
	}
	return core.Result{Data: data, Message: msg}, nil
}

// csvImported is the answer of a CSV import (fields in the order of the JSON keys,
// alphabetical, as the map it replaces wrote them).
type csvImported struct {
	Appended     bool       `json:"appended"`
	Columns      []string   `json:"columns"`
	CSVPath      string     `json:"csv_path"`
	DBPath       string     `json:"db_path"`
	IfExists     string     `json:"if_exists"`
	ImportInfo   importInfo `json:"import_info"`
	RowsImported int64      `json:"rows_imported"`
	Table        string     `json:"table"`
}

// importInfo is how a CSV import read the file (fields in the order of the JSON keys,
// alphabetical). column_types stays a map: its keys are the table's column names (user
// data). date_failures, skipped_count and skipped_lines are there only when not zero.
type importInfo struct {
	ColumnTypes       map[string]string `json:"column_types"`
	DateFailures      int               `json:"date_failures,omitempty"`
	DetectedDelimiter string            `json:"detected_delimiter"`
	DetectedEncoding  string            `json:"detected_encoding"`
	GeneratedColumns  bool              `json:"generated_columns"`
	Method            string            `json:"method"`
	SkippedCount      int               `json:"skipped_count,omitempty"`
	SkippedLines      []int             `json:"skipped_lines,omitempty"`
}
