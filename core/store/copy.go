package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// CopyReport is what CopyState copied: the rows of each table, verified by counting the
// target's.
type CopyReport struct {
	Tables []TableCount
}

// TableCount is one table's row count.
type TableCount struct {
	Table string
	Rows  int64
}

// CopyState copies every table of the state database from into to, which must be empty and
// at the same schema version (both opened by OpenSource), in one transaction of to: all or
// nothing. The tables and their columns are read from from's schema, so a table a later
// migration adds is copied without a change here; schema_migrations is to's own, and the
// state's identity (its id, the storage it serves) is not copied: the caller records it.
// Each table's rows in to are counted against the rows read before the transaction commits.
func CopyState(ctx context.Context, from, to *DB) (CopyReport, error) {
	var rep CopyReport
	tables, err := from.tables(ctx)
	if err != nil {
		return rep, err
	}
	if !slices.Equal(tables, mustTables(to.tables(ctx))) {
		return rep, fmt.Errorf("store: the two state databases have other tables (%v, %v): open both with this fileshed first", tables, mustTables(to.tables(ctx)))
	}
	long := &DB{conn: to.unbounded(), sql: to.sql}
	err = long.durably(ctx, func(ctx context.Context, tx conn) error {
		rep.Tables = nil
		for _, t := range tables {
			var n int64
			if err := tx.queryRow(ctx, `SELECT count(*) FROM `+t).Scan(&n); err != nil {
				return err
			}
			if n > 0 && t != "schema_migrations" {
				return fmt.Errorf("the target state database is not empty (table %s has %d rows): copy into an empty database", t, n)
			}
		}
		for _, t := range tables {
			if t == "schema_migrations" {
				continue
			}
			n, err := copyTable(ctx, from.unbounded(), tx, t)
			if err != nil {
				return fmt.Errorf("table %s: %w", t, err)
			}
			var got int64
			if err := tx.queryRow(ctx, `SELECT count(*) FROM `+t).Scan(&got); err != nil {
				return err
			}
			if got != n {
				return fmt.Errorf("table %s: %d rows read, %d in the target", t, n, got)
			}
			rep.Tables = append(rep.Tables, TableCount{Table: t, Rows: n})
		}
		return to.dialect.resetIdentities(ctx, tx)
	})
	if err != nil {
		return CopyReport{}, fmt.Errorf("store: copy the state: %w", err)
	}
	return rep, nil
}

// mustTables is tables' list, nil on an error (the comparison then fails and says so).
func mustTables(t []string, _ error) []string { return t }

// tables lists the state database's tables, sorted.
func (d *DB) tables(ctx context.Context) ([]string, error) {
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
	if d.dialect == Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()
			AND table_type = 'BASE TABLE' ORDER BY table_name`
	}
	rs, err := d.query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("store: list tables: %w", err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var t string
		if err := rs.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	slices.Sort(out)
	return out, rs.Err()
}

// copyTable copies table t's rows from src into tx, column by name, and returns how many.
func copyTable(ctx context.Context, src conn, tx conn, t string) (int64, error) {
	where := ""
	if t == "state_identity" {
		where = ` WHERE name NOT IN ('` + IdentityDatabase + `', '` + IdentityStorage + `')`
	}
	rs, err := src.query(ctx, `SELECT * FROM `+t+where)
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return 0, err
	}
	marks := make([]string, len(cols))
	for i := range cols {
		marks[i] = fmt.Sprintf("$%d", i+1)
	}
	insert := `INSERT INTO ` + t + ` (` + strings.Join(cols, ", ") + `) ` + tx.dialect.overriding() +
		`VALUES (` + strings.Join(marks, ", ") + `)`
	var n int64
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Rows.Scan(ptrs...); err != nil {
			return n, err
		}
		if _, err := tx.exec(ctx, insert, vals...); err != nil {
			return n, err
		}
		n++
	}
	return n, rs.Err()
}

// overriding lets an INSERT give the value of an identity column (the audit id) on
// PostgreSQL.
func (d dialect) overriding() string {
	if d == Postgres {
		return `OVERRIDING SYSTEM VALUE `
	}
	return ""
}

// resetIdentities moves every identity column's sequence past the rows copied in, so that the
// next row gets a new id (PostgreSQL; SQLite's rowid needs nothing).
func (d dialect) resetIdentities(ctx context.Context, tx conn) error {
	if d != Postgres {
		return nil
	}
	rs, err := tx.query(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES'`)
	if err != nil {
		return err
	}
	var cols [][2]string
	for rs.Next() {
		var t, c string
		if err := rs.Scan(&t, &c); err != nil {
			rs.Close()
			return err
		}
		cols = append(cols, [2]string{t, c})
	}
	rs.Close()
	for _, tc := range cols {
		if _, err := tx.exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2), COALESCE((SELECT MAX(`+tc[1]+`) FROM `+tc[0]+`), 0) + 1, false)`,
			tc[0], tc[1]); err != nil {
			return err
		}
	}
	return nil
}
