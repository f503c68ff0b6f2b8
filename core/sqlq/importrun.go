package sqlq

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Import loads the CSV that open returns (called twice: one pass infers the column
// types, the second inserts) into o.Table, in one transaction: the table is created,
// replaced or appended to as o.IfExists says, or nothing changes.
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
	plan, err := infer(open, o, nums)
	if err != nil {
		return nil, err
	}
	dateCols := map[int]bool{}
	for _, c := range o.DateColumns {
		i := plan.index(c)
		if i < 0 {
			return nil, &CSVError{Kind: CSVBadOption, Msg: fmt.Sprintf("date column %q is not a column of the CSV (columns: %s)", c, strings.Join(plan.rep.Columns, ", "))}
		}
		dateCols[i] = true
		plan.types[i] = typeText
	}
	tx, err := d.conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, d.denied(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := d.prepareTable(ctx, tx, o, plan); err != nil {
		return nil, err
	}
	rep := plan.rep
	for i, t := range plan.types {
		rep.Types[i] = t.String()
	}
	ph := strings.TrimSuffix(strings.Repeat("?,", len(plan.types)), ",")
	ins, err := tx.PrepareContext(ctx, fmt.Sprintf("INSERT INTO %s VALUES (%s)", quoteIdent(o.Table), ph))
	if err != nil {
		return nil, d.denied(err)
	}
	defer ins.Close()
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := newSource(f, o, &plan.enc, plan.delim)
	if err != nil {
		return nil, err
	}
	if o.HasHeader {
		if _, _, err := src.next(0, func(int) error { return nil }); err != nil {
			return nil, err
		}
	}
	args := make([]any, len(plan.types))
	for {
		rec, _, err := src.next(len(plan.types), func(int) error { return nil })
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for i, t := range plan.types {
			switch {
			case i >= len(rec) || naValues[rec[i]]:
				args[i] = nil
			case dateCols[i]:
				if v, ok := dt.parse(rec[i]); ok {
					args[i] = v
				} else {
					args[i] = rec[i]
					rep.DateFailures++
				}
			default:
				args[i] = nums.value(t, rec[i])
			}
		}
		if _, err := ins.ExecContext(ctx, args...); err != nil {
			return nil, d.denied(err)
		}
		rep.Rows++
	}
	if err := tx.Commit(); err != nil {
		return nil, d.denied(err)
	}
	return &rep, nil
}

// plan is what the first pass learnt.
type plan struct {
	rep   ImportReport
	types []colType
	enc   decoder
	delim rune
}

func (p *plan) index(col string) int {
	for i, c := range p.rep.Columns {
		if c == col || strings.EqualFold(c, sanitize(col)) {
			return i
		}
	}
	return -1
}

// infer is the first pass: encoding, delimiter, columns, types, malformed records.
func infer(open func() (io.ReadCloser, error), o ImportOptions, nums numbers) (*plan, error) {
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
	skipped := func(line int) error {
		if p.rep.SkippedCount++; len(p.rep.SkippedLines) < 10 {
			p.rep.SkippedLines = append(p.rep.SkippedLines, line)
		}
		if p.rep.SkippedCount > maxSkipped {
			return &CSVError{Kind: CSVParse, Line: line, Msg: fmt.Sprintf("more than %d malformed records (first at line %d)", maxSkipped, p.rep.SkippedLines[0])}
		}
		return nil
	}
	first, _, err := src.next(0, skipped)
	if err == io.EOF {
		return nil, emptyOrBroken(p, "CSV file is empty (no data rows)")
	}
	if err != nil {
		return nil, err
	}
	if len(first) > MaxColumns {
		return nil, &CSVError{Kind: CSVTooWide, Columns: len(first), Msg: fmt.Sprintf("CSV has too many columns (%d)", len(first))}
	}
	p.types = make([]colType, len(first))
	var rows int64
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
	for {
		rec, _, err := src.next(len(p.types), skipped)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		widen(p.types, rec, nums)
		rows++
	}
	if rows == 0 {
		return nil, emptyOrBroken(p, "CSV file is empty (no data rows)")
	}
	p.rep.Types = make([]string, len(p.types))
	return p, nil
}

// emptyOrBroken is the error of a CSV without a single good record: a parse error when
// records were left out, else CSV_EMPTY.
func emptyOrBroken(p *plan, msg string) error {
	if p.rep.SkippedCount > 0 {
		return &CSVError{Kind: CSVParse, Line: p.rep.SkippedLines[0], Msg: fmt.Sprintf("no well-formed record (first malformed at line %d)", p.rep.SkippedLines[0])}
	}
	return &CSVError{Kind: CSVEmpty, Msg: msg}
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
// characters become "_".
func sanitize(h string) string {
	s := strings.Trim(nonIdent.ReplaceAllString(strings.TrimSpace(h), "_"), "_")
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		s = "c_" + s
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
func (d *DB) prepareTable(ctx context.Context, tx *sql.Tx, o ImportOptions, p *plan) error {
	cols, types, err := tableColumns(ctx, tx, o.Table)
	if err != nil {
		return d.denied(err)
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
		if _, err := tx.ExecContext(ctx, "DROP TABLE "+quoteIdent(o.Table)); err != nil {
			return d.denied(err)
		}
	case exists:
		return ErrTableExists
	}
	defs := make([]string, len(p.types))
	for i, t := range p.types {
		defs[i] = quoteIdent(p.rep.Columns[i]) + " " + t.String()
	}
	_, err = tx.ExecContext(ctx, fmt.Sprintf("CREATE TABLE %s (%s)", quoteIdent(o.Table), strings.Join(defs, ", ")))
	return d.denied(err)
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
func tableColumns(ctx context.Context, tx *sql.Tx, table string) ([]string, []string, error) {
	rows, err := tx.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var names, types []string
	for rows.Next() {
		var n, t string
		if err := rows.Scan(&n, &t); err != nil {
			return nil, nil, err
		}
		names, types = append(names, n), append(types, t)
	}
	return names, types, rows.Err()
}

func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
