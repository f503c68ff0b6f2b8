package store

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// fillEveryTable writes at least one row into every table of d through the store's API, with
// awkward text (NUL, invalid UTF-8) and binary keys, and returns the rows written per table.
func fillEveryTable(t *testing.T, d *DB) {
	t.Helper()
	ctx := context.Background()
	awkward := "a\x00b\xff/ü.txt"
	now := time.Now()
	steps := []error{
		d.SetOwnership(ctx, Ownership{GroupID: "g1", Path: awkward, Owner: "alice", Mode: "owner_ro"}),
		d.SetUsage(ctx, Owner{Kind: "user", ID: "alice"}, Amount{Bytes: 42, Files: 3}),
		d.Audit(ctx, AuditEntry{UserID: "alice", ConvID: "c1", Tool: "shed_tree", Zone: "storage", Path: awkward, Outcome: "ok"}),
		d.Audit(ctx, AuditEntry{UserID: "bob", ConvID: "c2", Tool: "shed_read", Zone: "storage", Path: "x", Outcome: "ok"}),
		d.AddLink(ctx, Link{ID: "l1", Owner: "alice", Zone: "storage", Path: awkward, Expires: now.Add(time.Hour), Page: true}),
		d.SeeMembers(ctx, "alice", "Alice", []string{"g1"}, now),
		d.NoteWriter(ctx, "r1", Owner{Kind: "group", ID: "g1"}),
		d.SetIdentity(ctx, IdentityMasterKey, "0123456789abcdef"),
		d.SetIdentity(ctx, IdentityDatabase, "the-source-id"),
		// a command killed with the server: its record goes along, for the recovery
		d.StartCommand(ctx, Command{ID: "c1", Replica: "r1", Owner: Owner{Kind: "group", ID: "g1"}, UserID: "alice",
			Name: "Alice", ConvID: "c1", Message: "shed_exec: tar", Protected: []string{awkward}, Started: now}),
		// a change of the journal: replicas list and undo it, from its inline image
		d.JournalBegin(ctx, []JournalEntry{{Batch: "b1", UserID: "alice", ConvID: "c1", Tool: "Patch", Owner: Owner{Kind: "user", ID: "alice"},
			Zone: "storage", Path: awkward, Op: "write", Image: "inline:00", ImageData: []byte{0, 1, 0xff}, BeforeIdent: "f:1:2:3:4"}}),
	}
	_, err := d.AcquireLock(ctx, Lock{ZoneKey: "group:g1", Path: awkward, UserID: "alice", ConvID: "c1"}, time.Hour)
	steps = append(steps, err)
	_, err = d.AddUserKey(ctx, UserKey{UserID: "alice", Wrapped: []byte{0, 1, 2, 0xff}, Salt: []byte{9, 0}, KeyID: "k1"})
	steps = append(steps, err)
	_, err = d.SharedKey(ctx, "links", []byte{0xde, 0xad, 0, 0xbe})
	steps = append(steps, err)
	_, err = d.Heartbeat(ctx, Replica{ID: "r1", Host: "h", PID: 7})
	steps = append(steps, err)
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
}

// TestCopyStateCopiesEveryTable (issue 32 item 4): the SQLite state copies into an empty
// PostgreSQL database table by table, from the schema (every table of the store holds rows
// here: a table a migration adds and this test does not fill fails it), each row exactly
// (awkward text, binary keys), the audit ids kept and the next one new; the target's own
// identity is not overwritten; a target that holds rows is refused and left unchanged.
func TestCopyStateCopiesEveryTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from, to := openTest(t, SQLite), openTest(t, Postgres)
	fillEveryTable(t, from)
	rep, err := CopyState(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	all, err := from.tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]int64{}
	for _, tc := range rep.Tables {
		counted[tc.Table] = tc.Rows
	}
	for _, tb := range all {
		if tb == "schema_migrations" {
			continue
		}
		want := int64(1)
		switch tb {
		case "audit":
			want = 2
		case "state_identity":
			want = 1 // the fingerprint; the source's id stays behind
		}
		if counted[tb] != want {
			t.Errorf("table %s: %d rows copied, want %d (report %v)", tb, counted[tb], want, rep.Tables)
		}
	}
	awkward := "a\x00b\xff/ü.txt"
	if o, ok, err := to.Ownership(ctx, "g1", awkward); err != nil || !ok || o.Mode != "owner_ro" {
		t.Errorf("ownership in the target: %+v %v %v", o, ok, err)
	}
	if k, err := to.UserKey(ctx, "alice"); err != nil || !bytes.Equal(k.Wrapped, []byte{0, 1, 2, 0xff}) {
		t.Errorf("user key in the target: %+v %v", k, err)
	}
	if j, err := to.Journal(ctx, JournalQuery{UserID: "alice"}); err != nil || len(j) != 1 {
		t.Errorf("journal in the target: %+v %v", j, err)
	} else if b, ok, err := to.JournalImageData(ctx, j[0].ID); err != nil || !ok || !bytes.Equal(b, []byte{0, 1, 0xff}) {
		t.Errorf("the inline image in the target: %q %v %v", b, ok, err)
	}
	if l, err := to.LinkByID(ctx, "l1"); err != nil || l.Path != awkward || !l.Page {
		t.Errorf("link in the target: %+v %v", l, err)
	}
	if id, ok, err := to.Identity(ctx, IdentityDatabase, ""); err != nil || ok {
		t.Errorf("the source's database id was copied: %q %v %v", id, ok, err)
	}
	if err := to.Audit(ctx, AuditEntry{UserID: "carol", ConvID: "c3", Tool: "shed_tree", Outcome: "ok"}); err != nil {
		t.Fatalf("an audit row after the copy: %v", err)
	}
	var ids int
	if err := to.queryRow(ctx, `SELECT count(DISTINCT id) FROM audit`).Scan(&ids); err != nil || ids != 3 {
		t.Errorf("audit ids after the copy: %d distinct (%v), want 3", ids, err)
	}
	if _, err := CopyState(ctx, from, to); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("a copy into a database that holds rows: %v", err)
	}
	var n int
	if err := to.queryRow(ctx, `SELECT count(*) FROM ownership`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the refused copy changed the target: %d ownership rows (%v)", n, err)
	}
}
