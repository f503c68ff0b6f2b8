package sqlq

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// sampleRecords is how many records the first pass reads to infer the column types.
const sampleRecords = 5000

// Import loads the CSV that open returns into o.Table, in one transaction: the table is
// created, replaced or appended to as o.IfExists says, or nothing changes. A first pass
// reads a sample to infer the column types; the second streams every record into the
// table. A later value that does not fit its column's type (a word in a column of
// numbers, "007" among integers) rolls the transaction back, the types are inferred from
// the whole file, and the load runs again: the declared types are always right, and a
// clean file is read about once.
func (d *DB) Import(ctx context.Context, open func() (io.ReadCloser, error), o ImportOptions) (*ImportReport, error) {
	if o.MaxRecord <= 0 {
		o.MaxRecord = 16 << 20
	}
	dt, err := newDates(o.DateFormat)
	if err != nil {
		return nil, &CSVError{Kind: CSVBadOption, Msg: err.Error()}
	}
	if o.Decimal != "" && o.Decimal != "." && o.Decimal != "," {
		return nil, &CSVError{Kind: CSVBadOption, Msg: fmt.Sprintf("decimal must be '.' or ',', got %q", o.Decimal)}
	}
	nums := numbers{comma: o.Decimal == ","}
	sample := sampleRecords
	for {
		p, err := infer(ctx, open, o, nums, sample)
		if err != nil {
			return nil, err
		}
		if err := p.dateColumns(o.DateColumns); err != nil {
			return nil, err
		}
		var rep *ImportReport
		err = d.conn.Raw(func(dc any) error {
			c, ok := dc.(rawConn)
			if !ok {
				return errors.New("sqlq: the driver connection cannot execute")
			}
			rep, err = d.load(ctx, c, open, o, p, nums, dt)
			return err
		})
		if errors.Is(err, errRetype) && sample > 0 {
			sample = 0 // the whole file, this time
			continue
		}
		if err != nil {
			return nil, d.denied(err)
		}
		return rep, nil
	}
}

// rawConn is what Import needs of the driver's connection: the insert loop runs on it
// directly (database/sql's per-call bookkeeping doubled the cost of an import).
type rawConn interface {
	driver.ExecerContext
	driver.QueryerContext
	driver.ConnPrepareContext
}

// errRetype says a value did not fit the type inferred from the sample.
var errRetype = errors.New("a value does not fit the inferred column type")

// load is the second pass, inside one transaction on c.
func (d *DB) load(ctx context.Context, c rawConn, open func() (io.ReadCloser, error), o ImportOptions, p *plan, nums numbers, dt dates) (_ *ImportReport, err error) {
	exec := func(q string) error {
		_, err := c.ExecContext(ctx, q, nil)
		return err
	}
	if err := d.internal(func() error { return exec("PRAGMA cache_size=-32768") }); err != nil {
		return nil, err
	}
	if err := exec("BEGIN IMMEDIATE"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = exec("ROLLBACK")
		}
	}()
	if err := prepareTable(ctx, c, o, p); err != nil {
		return nil, err
	}
	rep := p.rep
	rep.Types = make([]string, len(p.types))
	for i, t := range p.types {
		rep.Types[i] = t.String()
	}
	n := len(p.types)
	batch := max(1, min(insertBatch, 32766/n))
	many, err := prepareInsert(ctx, c, o.Table, n, batch)
	if err != nil {
		return nil, err
	}
	defer many.Close()
	one, err := prepareInsert(ctx, c, o.Table, n, 1)
	if err != nil {
		return nil, err
	}
	defer one.Close()
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := newSource(f, o, &p.enc, p.delim)
	if err != nil {
		return nil, err
	}
	skipped := func(line int) error {
		if rep.SkippedCount++; len(rep.SkippedLines) < 10 {
			rep.SkippedLines = append(rep.SkippedLines, line)
		}
		if rep.SkippedCount > maxSkipped {
			return &CSVError{Kind: CSVParse, Line: line, Msg: fmt.Sprintf("more than %d malformed records (first at line %d)", maxSkipped, rep.SkippedLines[0])}
		}
		return nil
	}
	if o.HasHeader {
		if _, _, err := src.next(0, skipped); err != nil {
			return nil, err
		}
	}
	args := make([]driver.NamedValue, batch*n)
	for i := range args {
		args[i].Ordinal = i + 1
	}
	// Why not ctx for each insert: the driver starts a watcher goroutine per call with a
	// cancellable context (a third of the import's time); the deadline is checked per batch.
	flush := func(rows int) error {
		if rows == batch {
			_, err := many.(driver.StmtExecContext).ExecContext(context.Background(), args)
			return err
		}
		for r := range rows {
			row := args[r*n : (r+1)*n]
			for i := range row {
				row[i].Ordinal = i + 1
			}
			if _, err := one.(driver.StmtExecContext).ExecContext(context.Background(), row); err != nil {
				return err
			}
		}
		return nil
	}
	pending := 0
	for {
		rec, _, err := src.next(n, skipped)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		row := args[pending*n : (pending+1)*n]
		for i, t := range p.types {
			switch {
			case i >= len(rec) || naValues[rec[i]]:
				row[i].Value = nil
			case p.dates[i]:
				if v, ok := dt.parse(rec[i]); ok {
					row[i].Value = v
				} else {
					row[i].Value = rec[i]
					rep.DateFailures++
				}
			case t == typeText:
				row[i].Value = rec[i]
			default:
				v, ok := nums.value(t, rec[i])
				if !ok {
					return nil, errRetype
				}
				row[i].Value = v
			}
		}
		rep.Rows++
		if pending++; pending == batch {
			if err := flush(pending); err != nil {
				return nil, err
			}
			pending = 0
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
	}
	if err := flush(pending); err != nil {
		return nil, err
	}
	if err := exec("COMMIT"); err != nil {
		return nil, err
	}
	return &rep, nil
}

// insertBatch is how many rows one INSERT statement carries.
const insertBatch = 64

// prepareInsert prepares an INSERT of rows rows of n values.
func prepareInsert(ctx context.Context, c rawConn, table string, n, rows int) (driver.Stmt, error) {
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
	q := fmt.Sprintf("INSERT INTO %s VALUES %s", quoteIdent(table), strings.TrimSuffix(strings.Repeat(row+",", rows), ","))
	st, err := c.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if _, ok := st.(driver.StmtExecContext); !ok {
		st.Close()
		return nil, errors.New("sqlq: the driver statement cannot execute")
	}
	return st, nil
}

// plan is what the first pass learnt.
type plan struct {
	rep   ImportReport
	types []colType
	dates []bool
	enc   decoder
	delim rune
}

// dateColumns marks the date columns (TEXT: ISO dates).
func (p *plan) dateColumns(names []string) error {
	p.dates = make([]bool, len(p.types))
	for _, c := range names {
		i := p.index(c)
		if i < 0 {
			return &CSVError{Kind: CSVBadOption, Msg: fmt.Sprintf("date column %q is not a column of the CSV (columns: %s)", c, strings.Join(p.rep.Columns, ", "))}
		}
		p.dates[i], p.types[i] = true, typeText
	}
	return nil
}

func (p *plan) index(col string) int {
	for i, c := range p.rep.Columns {
		if c == col || strings.EqualFold(c, sanitize(col)) {
			return i
		}
	}
	return -1
}

// infer is the first pass: encoding, delimiter, columns, and the types of the first
// limit records (0: all).
func infer(ctx context.Context, open func() (io.ReadCloser, error), o ImportOptions, nums numbers, limit int) (*plan, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := newSource(f, o, nil, 0)
	if err != nil {
		return nil, err
	}
	p := &plan{enc: src.enc, delim: src.delim}
	p.rep.Encoding, p.rep.Delimiter = src.enc.name, string(src.delim)
	bad := 0
	skipped := func(line int) error {
		if bad++; bad > maxSkipped {
			return &CSVError{Kind: CSVParse, Line: line, Msg: fmt.Sprintf("more than %d malformed records", maxSkipped)}
		}
		if bad == 1 {
			p.rep.SkippedLines = []int{line}
		}
		return nil
	}
	first, _, err := src.next(0, skipped)
	if err == io.EOF {
		return nil, emptyOrBroken(p, bad)
	}
	if err != nil {
		return nil, err
	}
	if len(first) > MaxColumns {
		return nil, &CSVError{Kind: CSVTooWide, Columns: len(first), Msg: fmt.Sprintf("CSV has too many columns (%d)", len(first))}
	}
	p.types = make([]colType, len(first))
	rows := 0
	if o.HasHeader {
		p.rep.Columns = headerNames(first)
	} else {
		p.rep.Generated = true
		for i := range first {
			p.rep.Columns = append(p.rep.Columns, "col_"+strconv.Itoa(i+1))
		}
		widen(p.types, first, nums)
		rows++
	}
	for limit == 0 || rows < limit {
		rec, _, err := src.next(len(p.types), skipped)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		widen(p.types, rec, nums)
		if rows++; rows%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if rows == 0 && (!o.HasHeader || bad > 0) {
		return nil, emptyOrBroken(p, bad)
	}
	if rows == 0 {
		// A header alone is a schema (as the original): the empty table with its columns,
		// TEXT since no value says otherwise.
		for i := range p.types {
			p.types[i] = typeText
		}
	}
	p.rep.SkippedLines = nil
	return p, nil
}

// emptyOrBroken is the error of a CSV without a single good record: a parse error when
// records were left out, else CSV_EMPTY.
func emptyOrBroken(p *plan, bad int) error {
	if bad > 0 {
		return &CSVError{Kind: CSVParse, Line: p.rep.SkippedLines[0], Msg: fmt.Sprintf("no well-formed record (first malformed at line %d)", p.rep.SkippedLines[0])}
	}
	return &CSVError{Kind: CSVEmpty, Msg: "CSV file is empty (no data rows)"}
}

func widen(types []colType, rec []string, nums numbers) {
	for i := range types {
		if i < len(rec) && !naValues[rec[i]] {
			types[i] = nums.classify(types[i], rec[i])
		}
	}
}

var nonIdent = regexp.MustCompile(`[^\p{L}\p{N}_]+`)

// sanitize makes a header cell a plain identifier (letters, digits, "_"): runs of other
// characters become "_", and a name starting with a digit gets a leading "_" (as the
// original: "2nd" is "_2nd").
func sanitize(h string) string {
	s := strings.Trim(nonIdent.ReplaceAllString(strings.TrimSpace(h), "_"), "_")
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	return s
}

// headerNames sanitises a header row: empty names become col_N, repeated ones get _2, _3.
func headerNames(h []string) []string {
	out := make([]string, len(h))
	seen := map[string]int{}
	for i, c := range h {
		n := sanitize(c)
		if n == "" {
			n = "col_" + strconv.Itoa(i+1)
		}
		k := strings.ToLower(n)
		if seen[k]++; seen[k] > 1 {
			n += "_" + strconv.Itoa(seen[k])
		}
		out[i] = n
	}
	return out
}

// prepareTable applies if_exists: refuse, drop and create, create, or check that the
// existing table takes the CSV's columns (its types then decide the conversion).
func prepareTable(ctx context.Context, c rawConn, o ImportOptions, p *plan) error {
	cols, types, err := tableColumns(ctx, c, o.Table)
	if err != nil {
		return err
	}
	exists := len(cols) > 0
	switch {
	case exists && o.IfExists == "append":
		if len(cols) != len(p.types) {
			return &CSVError{Kind: CSVMismatch, Columns: len(p.types),
				Msg: fmt.Sprintf("Table '%s' has %d columns, the CSV %d", o.Table, len(cols), len(p.types))}
		}
		p.rep.Columns, p.rep.Appended = cols, true
		for i, t := range types {
			p.types[i] = affinity(t, p.types[i])
		}
		return nil
	case exists && o.IfExists == "replace":
		if _, err := c.ExecContext(ctx, "DROP TABLE "+quoteIdent(o.Table), nil); err != nil {
			return err
		}
	case exists:
		return ErrTableExists
	}
	defs := make([]string, len(p.types))
	for i, t := range p.types {
		defs[i] = quoteIdent(p.rep.Columns[i]) + " " + t.String()
	}
	_, err = c.ExecContext(ctx, fmt.Sprintf("CREATE TABLE %s (%s)", quoteIdent(o.Table), strings.Join(defs, ", ")), nil)
	return err
}

// affinity is how the values of a CSV column are bound into an existing column.
func affinity(decl string, inferred colType) colType {
	d := strings.ToUpper(decl)
	if strings.Contains(d, "CHAR") || strings.Contains(d, "CLOB") || strings.Contains(d, "TEXT") {
		return typeText
	}
	return inferred
}

// tableColumns lists the columns of table and their declared types (none: no table).
func tableColumns(ctx context.Context, c rawConn, table string) ([]string, []string, error) {
	rows, err := c.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?)", []driver.NamedValue{{Ordinal: 1, Value: table}})
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var names, types []string
	vals := make([]driver.Value, 2)
	for {
		if err := rows.Next(vals); err == io.EOF {
			break
		} else if err != nil {
			return nil, nil, err
		}
		n, _ := vals[0].(string)
		t, _ := vals[1].(string)
		names, types = append(names, n), append(types, t)
	}
	return names, types, nil
}

func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
