package store

import (
	"context"
	"testing"
	"time"
)

func TestAudit(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		cases := []struct {
			name string
			e    AuditEntry
		}{
			{"success", AuditEntry{At: t0, UserID: "alice", ConvID: "chat-1", Tool: "shed_patch_text", Zone: "storage", Path: "a.txt", Outcome: "ok"}},
			{"failure code", AuditEntry{At: t0, UserID: "bob", ConvID: "unknown", Tool: "shed_delete", Zone: "group:team", Path: "x", Outcome: "FILE_LOCKED"}},
			{"zero-argument tool", AuditEntry{At: t0, UserID: "alice", ConvID: "c", Tool: "shed_stats", Outcome: "ok"}},
			{"hostile strings stored verbatim", AuditEntry{At: t0, UserID: "a'); DROP TABLE audit; --", ConvID: "c\x00d",
				Tool: "shed_exec", Zone: "storage", Path: "../../etc/passwd\xff", Outcome: "PATH_ESCAPE"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := openTest(t, drv)
				ctx := context.Background()
				if err := d.Audit(ctx, tc.e); err != nil {
					t.Fatal(err)
				}
				var got AuditEntry
				var at int64
				if err := d.queryRow(ctx, `SELECT at_us, user_id, conv_id, tool, zone, path, outcome FROM audit`).
					Scan(&at, &got.UserID, &got.ConvID, &got.Tool, &got.Zone, &got.Path, &got.Outcome); err != nil {
					t.Fatal(err)
				}
				got.At = fromMicros(at)
				if got != tc.e {
					t.Errorf("stored %+v, want %+v", got, tc.e)
				}
			})
		}
	})
}

func TestAuditAppendsAndDefaultsTime(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		before := time.Now().Add(-time.Millisecond)
		for range 3 {
			if err := d.Audit(ctx, AuditEntry{UserID: "u", ConvID: "c", Tool: "shed_tree", Outcome: "ok"}); err != nil {
				t.Fatal(err)
			}
		}
		var n int
		var first, last int64
		if err := d.sql.QueryRowContext(ctx, `SELECT COUNT(*), MIN(at_us), MAX(at_us) FROM audit`).Scan(&n, &first, &last); err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Errorf("%d entries, want 3", n)
		}
		if fromMicros(first).Before(before) || fromMicros(last).After(time.Now()) {
			t.Errorf("times %v..%v, want about now", fromMicros(first), fromMicros(last))
		}
	})
}
