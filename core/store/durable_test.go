package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fileshed/fileshed/internal/pgtest"
)

// TestGuardingRecordsSurviveADatabaseCrash (issue 32 item 5): the records that guard files
// — group ownership, locked edits, user keys, links and their revocation, a member's
// departure (it refuses the former member's links) — are committed
// durably even though the state's sessions use synchronous_commit=off: a crash of the
// PostgreSQL server (pg_ctl -m immediate) right after they were acknowledged loses none of
// them. The server defers its background WAL flush (pgtest.Crashable), so a commit that did
// not wait for its flush is lost, as it would be on a busy production server.
func TestGuardingRecordsSurviveADatabaseCrash(t *testing.T) {
	t.Parallel()
	pg := pgtest.NewCrashable(t)
	src := Source{Driver: Postgres, URL: pg.URL(t)}
	d, err := OpenSource(src)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const n = 20
	now := time.Now()
	for i := range n {
		p := fmt.Sprintf("f%02d.txt", i)
		if err := d.SetOwnership(ctx, Ownership{GroupID: "g1", Path: p, Owner: "alice", Mode: "owner_ro"}); err != nil {
			t.Fatal(err)
		}
		if _, err := d.AcquireLock(ctx, Lock{ZoneKey: "group:g1", Path: p, UserID: "alice", ConvID: "c1"}, time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := d.AddUserKey(ctx, UserKey{UserID: fmt.Sprintf("u%02d", i), Wrapped: []byte("w"), Salt: []byte("s"), KeyID: "k"}); err != nil {
			t.Fatal(err)
		}
		l := Link{ID: fmt.Sprintf("l%02d", i), Owner: "alice", Zone: "storage", Path: p, Expires: now.Add(time.Hour)}
		if err := d.AddLink(ctx, l); err != nil {
			t.Fatal(err)
		}
		if _, err := d.RevokeLink(ctx, l.ID, "alice", now); err != nil {
			t.Fatal(err)
		}
		m := fmt.Sprintf("m%02d", i)
		if err := d.SeeMembers(ctx, m, m, []string{"g1"}, now); err != nil {
			t.Fatal(err)
		}
		if err := d.SeeMembers(ctx, m, m, nil, now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	pg.Crash(t)
	d, err = OpenSource(src)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	count := func(q string) int {
		var c int
		if err := d.queryRow(ctx, q).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	for what, q := range map[string]string{
		"ownership records": `SELECT count(*) FROM ownership WHERE mode = 'owner_ro'`,
		"locked edits":      `SELECT count(*) FROM locks`,
		"user keys":         `SELECT count(*) FROM user_keys`,
		"revoked links":     `SELECT count(*) FROM links WHERE revoked_us <> 0`,
		"departed members":  `SELECT count(*) FROM group_members WHERE left_us <> 0`,
	} {
		if got := count(q); got != n {
			t.Errorf("%s after the crash: %d of %d", what, got, n)
		}
	}
}
