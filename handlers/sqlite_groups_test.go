package handlers_test

import "testing"

// TestSQLiteGroupOwnership: a database created in a group is owned by its creator; once
// its mode is owner, other members may still read it but not write it (the ownership
// refusal, from a connection opened read-only) nor import into it.
func TestSQLiteGroupOwnership(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	db := func(user string, args map[string]any) reply {
		args["path"] = "g.db"
		return g.as(user, "shed_sqlite", in(args))
	}
	wantOK(t, db("alice", map[string]any{"query": "CREATE TABLE t(a)"}))
	wantOK(t, db("bob", map[string]any{"query": "INSERT INTO t VALUES (1)"})) // mode group: members write
	wantOK(t, g.as("alice", "shed_group_set_mode", map[string]any{"group": "team", "path": "g.db", "mode": "owner"}))
	r := db("bob", map[string]any{"query": "INSERT INTO t VALUES (2)"})
	if r.Success || r.Error == "" || r.Error == "EXEC_ERROR" {
		t.Fatalf("bob wrote alice's owner-mode database: %s", r.raw)
	}
	refusal := r.Error
	r = db("bob", map[string]any{"query": "SELECT count(*) FROM t"})
	wantOK(t, r)
	if r.Data["rows"].([]any)[0].([]any)[0] != 1.0 {
		t.Fatalf("count: %s", r.raw)
	}
	g.create("bob", "x.csv", "a\n5\n", "")
	wantError(t, db("bob", map[string]any{"import_csv": "x.csv", "table": "u"}), refusal)
	wantOK(t, db("alice", map[string]any{"query": "INSERT INTO t VALUES (3)"}))
}
