package sqlq

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeapBoundIsPerConnection: the bound is each connection's, not the process's: while
// one connection holds most of its bound, another still gets all of its own, a statement
// needing more than the bound fails with "out of memory" on its connection only, and every
// byte is credited back when the connections close.
func TestHeapBoundIsPerConnection(t *testing.T) {
	defer SetConnMemory(ConnMemory())
	if err := SetConnMemory(16 << 20); err != nil {
		t.Fatal(err)
	}
	heap.mu.Lock()
	before := len(heap.used)
	heap.mu.Unlock()
	dir := t.TempDir()
	conn := func(name string) *sql.DB {
		db, err := sql.Open("sqlite", filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		return db
	}
	a, b, c := conn("a.db"), conn("b.db"), conn("c.db")
	const twelve = "SELECT randomblob(6000000), randomblob(6000000)"
	hold := func(db *sql.DB) *sql.Rows {
		rows, err := db.Query(twelve + " UNION ALL SELECT 1, 2")
		if err != nil {
			t.Fatal(err)
		}
		var x, y []byte
		if !rows.Next() || rows.Scan(&x, &y) != nil || len(x)+len(y) != 12e6 {
			t.Fatalf("first row: %v", rows.Err())
		}
		return rows
	}
	ra := hold(a)
	rb := hold(b) // 24 MB between them, 12 MB each
	var x, y, z []byte
	err := c.QueryRow("SELECT randomblob(6000000), randomblob(6000000), randomblob(6000000)").Scan(&x, &y, &z)
	if err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("a connection went past its bound: %v", err)
	}
	ra.Close()
	if err := a.QueryRow(twelve).Scan(&x, &y); err != nil {
		t.Fatalf("a, after its statement ended: %v", err)
	}
	rb.Close()
	for _, db := range []*sql.DB{a, b, c} {
		db.Close()
	}
	heap.mu.Lock()
	after := len(heap.used)
	heap.mu.Unlock()
	if after != before {
		t.Fatalf("%d connections still charged after closing (was %d)", after, before)
	}
}
