package handlers_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// TestMaintenanceKeepsWritesInFlight (issue 25): shed_maintenance removed every temporary
// name it found in an editzone, so a write in flight there — of this server, or of another
// live replica on the same storage — lost its temporary file and failed. It now applies the
// sweeps' rule: it removes a name of this process that no write holds, and one of a
// replica that is dead (SQLite: of a process older than the server), never a live write's.
func TestMaintenanceKeepsWritesInFlight(t *testing.T) {
	e := start(t, nil)
	e.write("users/local/Storage/data/a.txt", "v1")
	const live = "LLLLLLLLLLLLLLLL"
	if e.cfg.State.Driver == store.Postgres { // another replica, alive: its row and its liveness lock
		ctx := context.Background()
		other, err := store.OpenSource(store.Source{Driver: store.Postgres, URL: e.cfg.State.URL})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		session, err := other.OpenSession(ctx, live)
		if err != nil {
			t.Fatal(err)
		}
		defer session.Close()
		if _, err := other.Heartbeat(ctx, store.Replica{ID: live, Host: "h"}); err != nil {
			t.Fatal(err)
		}
	}
	inFlight, release := confine.HoldTemp() // a write of this server, between its create and its rename
	defer release()
	dir := "users/local/Storage/editzone/chat-a/"
	names := map[string]string{ // what → its name in the editzone
		"this server's write in flight": inFlight,
		"this server's leftover":        confine.TempName(),
		"a live replica's write":        ".fileshed-tmp-" + live + "-" + "AAAAAAAAAAAAAAAAAAAAAAAAAA",
		"a dead process's leftover":     ".fileshed-tmp-DDDDDDDDDDDDDDDD-AAAAAAAAAAAAAAAAAAAAAAAAAA",
	}
	for what, name := range names {
		p := e.write(dir+name, "partial")
		if what == "a dead process's leftover" {
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := e.post("shed_maintenance", nil, conv("chat-a"))
	wantOK(t, r)
	for what, name := range names {
		want := what == "this server's write in flight" || what == "a live replica's write"
		if kept := exists(e, filepath.Join(dir, name)); kept != want {
			t.Errorf("%s: kept %v, want %v (%s)", what, kept, want, r.raw)
		}
	}
	if orphans, _ := r.Data["orphan_editzones"].([]any); len(orphans) != 2 {
		t.Errorf("orphan_editzones: %v, want the 2 leftovers", orphans)
	}
}
