package sqlq

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"time"

	sqlite "modernc.org/sqlite"

	"github.com/fileshed/fileshed/core/textcap"
)

// Limits bound what a query answers.
type Limits struct {
	// Rows is the most rows kept in the answer.
	Rows int
	// Bytes is the most bytes of values kept in the answer (about the JSON size).
	Bytes int
	// Cell is the most bytes of one TEXT value (head and tail kept around a marker).
	Cell int
	// Blob is the most bytes of one BLOB shown as hex.
	Blob int
	// Count is the most rows counted for Answer.Total once the answer is truncated. The
	// count also stops halfway between the truncation and the context's deadline, so that
	// counting never turns an answer into a timeout.
	Count int
}

// Answer is what a statement did.
type Answer struct {
	Columns []string
	Rows    [][]any
	// ReturnsRows is false for statements without result columns (writes, DDL).
	ReturnsRows bool
	// Truncated is true when rows were left out (Rows or Bytes reached).
	Truncated bool
	// Total is how many rows the statement returned, counted when Truncated (the rest is
	// read and discarded); TotalCapped says the count stopped before the end (at
	// Limits.Count, or for time).
	Total        int
	TotalCapped  bool
	RowsAffected int64
	LastInsertID int64
}

// Args turns the model's params (a JSON list for ?, ?NNN, or an object for :name, @name,
// $name) into driver arguments; whole numbers become integers (SQLite refuses 10.0 as a
// LIMIT).
func Args(params any) ([]any, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]any, len(p))
		for i, v := range p {
			a, err := arg(v)
			if err != nil {
				return nil, err
			}
			out[i] = a
		}
		return out, nil
	case map[string]any:
		out := make([]any, 0, len(p))
		for k, v := range p {
			a, err := arg(v)
			if err != nil {
				return nil, err
			}
			out = append(out, sql.Named(strings.TrimLeft(k, ":@$"), a))
		}
		return out, nil
	}
	return nil, errors.New("params must be a list (for ?) or an object (for :name)")
}

func arg(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool:
		return x, nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), nil
		}
		return x, nil
	}
	return nil, errors.New("each param must be a string, a number, a boolean or null")
}

// columns prepares stmt (which runs the authorizer on it) and returns its result column
// names (none for statements that return no rows).
func (d *DB) columns(stmt string) ([]string, error) {
	var names []string
	err := d.conn.Raw(func(dc any) error {
		ci, ok := dc.(interface {
			ColumnInfo(string) ([]sqlite.ColumnInfo, error)
		})
		if !ok {
			return errors.New("sqlq: the driver has no ColumnInfo")
		}
		info, err := ci.ColumnInfo(stmt)
		for _, c := range info {
			names = append(names, c.Name)
		}
		return err
	})
	return names, d.denied(err)
}

// Run executes one statement (see Single) with args. A statement with result columns is
// read row by row: rows beyond lim are not kept, only counted up to lim.Count (then the
// statement is stopped, never read to the end); each row is also given to each when not
// nil, before the caps (the full result, for a CSV export) — then reading continues to
// the end. Others are executed and report rows affected and the last insert id.
func (d *DB) Run(ctx context.Context, stmt string, args []any, lim Limits, each func(cols []string, row []any) error) (*Answer, error) {
	cols, err := d.columns(stmt)
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		res, err := d.conn.ExecContext(ctx, stmt, args...)
		if err != nil {
			return nil, d.denied(err)
		}
		a := &Answer{Columns: []string{}, Rows: [][]any{}}
		a.RowsAffected, _ = res.RowsAffected()
		a.LastInsertID, _ = res.LastInsertId()
		return a, nil
	}
	rows, err := d.conn.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, d.denied(err)
	}
	defer rows.Close()
	a := &Answer{Columns: cols, Rows: [][]any{}, ReturnsRows: true}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	used := 0
	var countUntil time.Time // zero: no deadline
	for rows.Next() {
		a.Total++
		if a.Truncated && each == nil {
			switch {
			case a.Total > lim.Count:
				a.Total, a.TotalCapped = lim.Count, true
			case !countUntil.IsZero() && time.Now().After(countUntil):
				a.TotalCapped = true
			default:
				continue // counted, not scanned
			}
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		if each != nil {
			if err := each(cols, vals); err != nil {
				return nil, err
			}
		}
		if a.Truncated {
			continue // each wants the rest
		}
		if len(a.Rows) >= lim.Rows || used >= lim.Bytes {
			a.Truncated = true
			if dl, ok := ctx.Deadline(); ok {
				countUntil = time.Now().Add(time.Until(dl) / 2)
			}
			continue
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			var n int
			row[i], n = Render(v, lim)
			used += n
		}
		a.Rows = append(a.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, d.denied(err)
	}
	return a, nil
}

// Render turns one SQLite value into JSON the model can read, and says about how many
// bytes it takes: NULL as null, numbers as numbers (infinities and NaN as strings), TEXT
// cut with head and tail past lim.Cell, BLOB as {"blob_hex", "blob_bytes"} with at most
// lim.Blob bytes shown.
func Render(v any, lim Limits) (any, int) {
	switch x := v.(type) {
	case nil:
		return nil, 4
	case int64:
		return x, 20
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return Text(x), 10
		}
		return x, 24
	case bool:
		return x, 5
	case string:
		if len(x) > lim.Cell {
			h := textcap.NewHeadTail(lim.Cell)
			_, _ = h.Write([]byte(x))
			s := h.String("")
			return s, len(s)
		}
		return x, len(x) + 2
	case []byte:
		shown := x[:min(len(x), lim.Blob)]
		m := map[string]any{"blob_hex": hex.EncodeToString(shown), "blob_bytes": len(x)}
		if len(shown) < len(x) {
			m["truncated"] = true
		}
		return m, 2*len(shown) + 40
	case time.Time:
		return Text(x), 25
	}
	return Text(v), 16
}
