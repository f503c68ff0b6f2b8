package store

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/internal/testtool"
)

// TestMembersSeenAndLeft: a request's groups record the user in each; a later request
// without one marks it left (the row stays), and a request with it again clears that.
func TestMembersSeenAndLeft(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		t0 := time.Now().Add(-time.Hour)
		if err := d.SeeMembers(ctx, "alice", "Alice", []string{"team", "ops"}, t0); err != nil {
			t.Fatal(err)
		}
		if err := d.SeeMembers(ctx, "bob", "Bob", []string{"team"}, t0); err != nil {
			t.Fatal(err)
		}
		t1 := t0.Add(time.Minute)
		if err := d.SeeMembers(ctx, "alice", "Alice B.", []string{"ops"}, t1); err != nil {
			t.Fatal(err)
		}
		ms, total, err := d.GroupMembers(ctx, "team", t0.Add(-time.Second), 10)
		if err != nil || total != 1 || len(ms) != 1 || ms[0].UserID != "bob" || ms[0].Name != "Bob" {
			t.Fatalf("team after alice left: %v %d %v", ms, total, err)
		}
		m, ok, err := d.Membership(ctx, "team", "alice")
		if err != nil || !ok || !m.Left.Equal(t1.Truncate(time.Microsecond)) {
			t.Fatalf("alice in team: %+v %v %v", m, ok, err)
		}
		if m, ok, _ := d.Membership(ctx, "ops", "alice"); !ok || !m.Left.IsZero() || m.Name != "Alice B." || !m.LastSeen.Equal(t1.Truncate(time.Microsecond)) {
			t.Fatalf("alice in ops: %+v", m)
		}
		if _, ok, _ := d.Membership(ctx, "team", "zed"); ok {
			t.Fatal("a user never seen has a record")
		}
		if err := d.SeeMembers(ctx, "alice", "Alice", []string{"team", "ops"}, t1.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if m, _, _ := d.Membership(ctx, "team", "alice"); !m.Left.IsZero() {
			t.Fatalf("alice back in team is still marked left: %+v", m)
		}
		// Not seen since: a member seen before `since` is not listed.
		if ms, total, _ := d.GroupMembers(ctx, "team", t1, 10); total != 1 || ms[0].UserID != "alice" {
			t.Fatalf("since filter: %v %d", ms, total)
		}
		named, err := d.MembersNamed(ctx, "team", []string{"alice", "bob", "zed"})
		if err != nil || len(named) != 2 || named["bob"].Name != "Bob" {
			t.Fatalf("MembersNamed: %v %v", named, err)
		}
	})
}

// TestMembersTableScales: 10,000 users in 50 groups each (500,000 rows); every query of a
// group or a user is an index search, the listing is bounded, the count exact. The rows are
// written by the sqlite3 program into the migrated file (C: a second, where the driver took
// two minutes under -race, issue 34); the queries checked run through the driver.
func TestMembersTableScales(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("inserts 500,000 rows")
	}
	testtool.Require(t, "sqlite3")
	src := testSource(t, SQLite) // the plans checked are SQLite's (EXPLAIN QUERY PLAN)
	migrated, err := OpenSource(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrated.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	insert := fmt.Sprintf(`INSERT INTO group_members (group_id, user_id, name, first_seen_us, last_seen_us, left_us)
		WITH RECURSIVE us(u) AS (SELECT 0 UNION ALL SELECT u + 1 FROM us WHERE u < 9999),
			gs(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM gs WHERE g < 49)
		SELECT printf('g%%02d', g), printf('user-%%05d', u), 'User', %d - u, %d - u, 0 FROM gs, us;`, now.UnixMicro(), now.UnixMicro())
	if out, err := exec.Command("sqlite3", src.Path, insert).CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v %s", err, out)
	}
	d, err := OpenSource(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	start := time.Now()
	ms, total, err := d.GroupMembers(ctx, "g07", now.Add(-24*time.Hour), 100)
	if err != nil || len(ms) != 100 || total != 10_000 || ms[0].UserID != "user-00000" {
		t.Fatalf("bounded listing: %d members, total %d, %v", len(ms), total, err)
	}
	if err := d.SeeMembers(ctx, "user-00001", "User", []string{"g01", "g02"}, now); err != nil {
		t.Fatal(err)
	}
	if _, total, _ := d.GroupMembers(ctx, "g03", now.Add(-24*time.Hour), 100); total != 9_999 {
		t.Fatalf("user-00001 left g03: total %d", total)
	}
	t.Logf("listing, count and one user's 50 groups: %v", time.Since(start))
	for _, q := range []string{memberListQuery, memberCountQuery, memberActiveQuery, memberQuery} {
		args := []any{"g07", "user-00001", int64(0), 100}[:strings.Count(q, "$")]
		rows, err := d.sql.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, p := range plan {
			if strings.Contains(p, "group_members") && !strings.HasPrefix(p, "SEARCH") {
				t.Errorf("not an index search: %q in the plan of\n%s", p, q)
			}
		}
	}
}
