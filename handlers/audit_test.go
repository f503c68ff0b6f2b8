package handlers_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestAuditTrail: every tool call leaves a row (who, tool, zone, path, outcome) in the state
// database, failures included, without secrets or host paths.
func TestAuditTrail(t *testing.T) {
	e := start(t, nil)
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, map[string]string{"X-OpenWebUI-Chat-Id": "chat-9"}))
	wantError(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "../etc/passwd"}, nil), "PATH_ESCAPE")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.base, "fileshed.sqlite")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type row struct{ user, conv, tool, zone, path, outcome string }
	var rows []row
	deadline := time.Now().Add(5 * time.Second)
	for len(rows) < 2 && time.Now().Before(deadline) {
		rows = rows[:0]
		q, err := db.Query(`SELECT user_id, conv_id, tool, zone, path, outcome FROM audit ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		for q.Next() {
			var r row
			if err := q.Scan(&r.user, &r.conv, &r.tool, &r.zone, &r.path, &r.outcome); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r)
		}
		q.Close()
		time.Sleep(20 * time.Millisecond)
	}
	want := []row{
		{"local", "chat-9", "shed_tree", "storage", ".", "OK"},
		{"local", "unknown", "shed_read", "storage", "../etc/passwd", "PATH_ESCAPE"},
	}
	if len(rows) != len(want) {
		t.Fatalf("audit rows: %+v", rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Fatalf("row %d: %+v, want %+v", i, rows[i], want[i])
		}
	}
}
