package handlers_test

import (
	"strings"
	"testing"
)

// TestSQLiteEmptyQueryIsInvalidParameter: a query that holds no statement (only a comment,
// semicolons, white space or a byte-order mark) is a parameter error with a hint, never an
// INTERNAL_ERROR (it was a recovered panic), and in a group zone it leaves no database file
// and no ownership record behind.
func TestSQLiteEmptyQueryIsInvalidParameter(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	for name, q := range map[string]string{
		"comment":         "-- nothing here",
		"block comment":   "/* nothing */",
		"semicolon":       ";",
		"semicolons":      " ;; ; ",
		"BOM":             "\ufeff",
		"BOM and comment": "\ufeff -- x\n;",
		"comment and ;":   "/* a */ ; -- b",
	} {
		t.Run(name, func(t *testing.T) {
			r := g.as("alice", "shed_sqlite", in(map[string]any{"path": "e.db", "query": q}))
			wantError(t, r, "INVALID_PARAMETER")
			if r.Details["parameter"] != "query" || r.Usage == "" {
				t.Fatalf("details or usage missing: %s", r.raw)
			}
			if _, ok := g.file("e.db"); ok {
				t.Fatal("the database file was created")
			}
		})
	}
	// White space alone is a missing query, as before.
	wantError(t, g.as("alice", "shed_sqlite", in(map[string]any{"path": "e.db", "query": " \n\t"})), "MISSING_PARAMETER")
	r := g.as("alice", "shed_group_info", map[string]any{"group": "team"})
	wantOK(t, r)
	if strings.Contains(r.raw, "e.db") {
		t.Fatalf("an ownership record was left: %s", r.raw)
	}
	// A statement after a byte-order mark runs.
	r = g.as("alice", "shed_sqlite", in(map[string]any{"path": "e.db", "query": "\ufeffSELECT 1 AS one"}))
	wantOK(t, r)
	if r.Data["rows"].([]any)[0].([]any)[0] != 1.0 {
		t.Fatalf("BOM + SELECT: %s", r.raw)
	}
}
