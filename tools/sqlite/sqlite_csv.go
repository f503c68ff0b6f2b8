package sqlite

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/sqlq"
)

// csvOut is the CSV export of a query: every row goes to a temporary file outside the
// zones while the statement runs (bounded by max_file_size_mb), then the file is written
// into the zone through the one atomic write path (quota, lock, ownership, commit).
//
// Why the work dir and not os.TempDir: the rows of an encrypted database are plaintext,
// and encryption.work_dir is where plaintext may be (a tmpfs the operator chose); its
// private "m-" folders are swept at start, so a kill -9 leaves nothing behind for good.
type csvOut struct {
	z      *core.Zone
	rel    string
	shown  string
	tmp    *core.WorkFile // in a private folder of the work dir
	w      *csv.Writer
	count  *countingWriter
	rows   int64
	header bool
}

// countingWriter counts bytes and refuses to pass max.
type countingWriter struct {
	f   io.Writer
	n   int64
	max int64
}

var errCSVTooLarge = errors.New("CSV export over max_file_size_mb")

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.n+int64(len(p)) > c.max {
		return 0, errCSVTooLarge
	}
	n, err := c.f.Write(p)
	c.n += int64(n)
	return n, err
}

// newCSVOut validates the export path (refusals come before the query runs).
func (s *Tools) newCSVOut(ctx context.Context, c core.Caller, z *core.Zone, p string) (*csvOut, error) {
	rel, err := z.Path(p, false)
	if err != nil {
		return nil, err
	}
	if _, err := core.StatTarget(z, rel, p); err != nil {
		return nil, err
	}
	if err := s.CheckWrite(ctx, c, z, rel, p, exportEdit(rel)); err != nil {
		return nil, err
	}
	tmp, err := s.NewWorkFile("export.csv") // swept once its replica is dead (core's sweepWorkDirOf)
	if err != nil {
		return nil, core.Errf(core.InternalError, "Cannot prepare the CSV export").Because(err)
	}
	cw := &countingWriter{f: tmp, max: int64(s.Config().MaxFileSizeMB) << 20}
	w := csv.NewWriter(cw)
	w.UseCRLF = true
	return &csvOut{z: z, rel: rel, shown: p, tmp: tmp, w: w, count: cw}, nil
}

// row writes the header once, then one row (RFC 4180: CRLF, quotes doubled).
func (o *csvOut) row(cols []string, vals []any) error {
	if !o.header {
		o.header = true
		if err := o.w.Write(cols); err != nil {
			return o.tooLarge(err)
		}
	}
	rec := make([]string, len(vals))
	for i, v := range vals {
		rec[i] = sqlq.Text(v)
	}
	o.rows++
	return o.tooLarge(o.w.Write(rec))
}

// tooLarge turns the refusal of countingWriter into FILE_TOO_LARGE.
func (o *csvOut) tooLarge(err error) error {
	if errors.Is(err, errCSVTooLarge) {
		return core.Errf(core.FileTooLarge, "The CSV export would be over the %d MB limit", o.count.max>>20).
			With("output_csv", o.shown).WithHint("Export fewer rows or columns (WHERE, LIMIT), or in several files")
	}
	return err
}

// discard removes the temporary file and its folder.
func (o *csvOut) discard() { o.tmp.Remove() }

// finishCSVOut writes the export into the zone.
func (s *Tools) finishCSVOut(ctx context.Context, c core.Caller, o *csvOut, d *dbFile, in SQLiteInput, ans *sqlq.Answer) (core.Result, error) {
	if !o.header { // no rows: the header alone
		if err := o.w.Write(ans.Columns); err != nil {
			return core.Result{}, core.Errf(core.InternalError, "Cannot write the CSV export").Because(err)
		}
	}
	o.w.Flush()
	if err := o.tooLarge(o.w.Error()); err != nil {
		if _, ok := core.AsError(err); ok {
			return core.Result{}, err
		}
		return core.Result{}, core.Errf(core.InternalError, "Cannot write the CSV export").Because(err)
	}
	if _, err := o.tmp.Seek(0, 0); err != nil {
		return core.Result{}, core.Errf(core.InternalError, "Cannot write the CSV export").Because(err)
	}
	z := o.z
	tx, _, err := s.BeginWrite(ctx, c, z, o.rel, o.shown, exportEdit(o.rel))
	if err != nil {
		return core.Result{}, err
	}
	defer tx.Close()
	if _, err := tx.WriteFile(core.Write{Size: o.count.n, Body: o.tmp}); err != nil {
		return core.Result{}, err
	}
	return core.Result{Data: csvExported{Columns: ans.Columns, OutputCSV: o.rel, Path: d.rel, Query: in.Query, RowsExported: o.rows},
		Message: fmt.Sprintf("Exported %d row(s) to %s", o.rows, o.rel)}, nil
}

// csvExported is the answer of a query with output_csv (fields in the order of the JSON
// keys, alphabetical, as the map it replaces wrote them).
type csvExported struct {
	Columns      []string `json:"columns"`
	OutputCSV    string   `json:"output_csv"`
	Path         string   `json:"path"`
	Query        string   `json:"query"`
	RowsExported int64    `json:"rows_exported"`
}

// exportEdit is the change a CSV export makes.
func exportEdit(rel string) core.Edit {
	return core.Edit{Tool: "shed_sqlite", Message: "shed_sqlite: export " + rel}
}

// decodeJSON parses a JSON value sent as a string (params), or returns the string.
func decodeJSON(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	return v
}
