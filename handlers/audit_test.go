package handlers_test

import (
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestAuditTrail: every tool call leaves a row (who, tool, zone, path, outcome) in the state
// database, failures included, without secrets or host paths.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, map[string]string{"X-OpenWebUI-Chat-Id": "chat-9"}))
	wantError(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "../etc/passwd"}, nil), "PATH_ESCAPE")
	want := []auditRow{
		{"local", "chat-9", "shed_tree", "storage", ".", "OK"},
		{"local", "unknown", "shed_read", "storage", "../etc/passwd", "PATH_ESCAPE"},
	}
	rows := auditRows(t, e, len(want))
	if len(rows) != len(want) {
		t.Fatalf("audit rows: %+v", rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Fatalf("row %d: %+v, want %+v", i, rows[i], want[i])
		}
	}
}

// auditRow is one row of the audit trail.
type auditRow struct{ user, conv, tool, zone, path, outcome string }

// auditRows reads the audit trail (written in the background) until it holds n rows or 5 s
// have passed.
func auditRows(t *testing.T, e *env, n int) []auditRow {
	t.Helper()
	db := stateDB(t, e)
	var rows []auditRow
	for deadline := time.Now().Add(5 * time.Second); len(rows) < n && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		rows = rows[:0]
		q, err := db.Query(`SELECT user_id, conv_id, tool, zone, path, outcome FROM audit ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		for q.Next() {
			var r auditRow
			if err := q.Scan(&r.user, &r.conv, &r.tool, &r.zone, &r.path, &r.outcome); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r)
		}
		q.Close()
	}
	return rows
}
