package handlers_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// conv returns the headers of an Open WebUI conversation (mode none: user "local").
func conv(id string) map[string]string { return map[string]string{"X-OpenWebUI-Chat-Id": id} }

// stateDB opens the server's state database for setup that no tool can do (backdating a
// lock, breaking the locks table): the SQLite file, or the PostgreSQL database of
// FILESHED_TEST_STATE=postgres. Statements use $N placeholders, which both accept.
func stateDB(t *testing.T, e *env) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite", "file:"+filepath.Join(e.base, "fileshed.sqlite")+"?_pragma=busy_timeout(5000)"
	if e.cfg.State.Driver == store.Postgres {
		driver, dsn = "pgx", e.cfg.State.URL
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// backdate makes every lock on path look taken age ago.
func backdate(t *testing.T, e *env, path string, age time.Duration) {
	t.Helper()
	if _, err := stateDB(t, e).Exec(`UPDATE locks SET since_us = $1 WHERE path = $2`, time.Now().Add(-age).UnixMicro(), path); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, e *env, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.base, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(e *env, rel string) bool {
	_, err := os.Lstat(filepath.Join(e.base, rel))
	return err == nil
}

func TestLockeditFlowStorage(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Storage/data/notes/a.txt", "one\r\ntwo\n")
	a := conv("chat-a")
	r := e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "notes/a.txt"}, a)
	wantOK(t, r)
	if r.Data["content"] != "one\r\ntwo\n" || r.Data["size"] != float64(9) || r.Data["zone"] != "Storage" ||
		r.Data["path"] != "notes/a.txt" || r.Data["locked_by"] != "local" || r.Data["is_binary"] != false {
		t.Fatalf("open data: %s", r.raw)
	}
	if r.Message != "File opened for editing: notes/a.txt" {
		t.Fatalf("message: %q", r.Message)
	}
	wc := "users/local/Storage/editzone/chat-a/notes/a.txt"
	if readFile(t, e, wc) != "one\r\ntwo\n" {
		t.Fatal("working copy differs")
	}
	r = e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "notes/a.txt", "content": "new"}, a)
	wantOK(t, r)
	if r.Data["mode"] != "overwrite" || r.Data["bytes_written"] != float64(3) || r.Data["new_size"] != float64(3) {
		t.Fatalf("overwrite data: %s", r.raw)
	}
	r = e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "notes/a.txt", "content": " text", "append": "true"}, a)
	wantOK(t, r)
	if r.Data["mode"] != "append" || r.Data["new_size"] != float64(8) {
		t.Fatalf("append data: %s", r.raw)
	}
	if readFile(t, e, "users/local/Storage/data/notes/a.txt") != "one\r\ntwo\n" {
		t.Fatal("original changed before save")
	}
	r = e.post("shed_lockedit_save", map[string]any{"zone": "storage", "path": "notes/a.txt"}, a)
	wantOK(t, r)
	if r.Data["size"] != float64(8) || r.Data["committed"] != false || r.Message != "Saved and unlocked: notes/a.txt" {
		t.Fatalf("save data: %s", r.raw)
	}
	if readFile(t, e, "users/local/Storage/data/notes/a.txt") != "new text" {
		t.Fatal("original not replaced")
	}
	if exists(e, wc) || exists(e, "users/local/Storage/editzone/chat-a/notes") {
		t.Fatal("working copy or its folder left behind")
	}
	wantError(t, e.post("shed_lockedit_save", map[string]any{"zone": "storage", "path": "notes/a.txt"}, a), "NOT_IN_EDIT_MODE")
	// The lock is gone: another conversation can open now, and cancel leaves the original.
	b := conv("chat-b")
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "notes/a.txt"}, b))
	wantOK(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "notes/a.txt", "content": "discard me"}, b))
	r = e.post("shed_lockedit_cancel", map[string]any{"zone": "storage", "path": "notes/a.txt"}, b)
	wantOK(t, r)
	if r.Data["changes_discarded"] != true || readFile(t, e, "users/local/Storage/data/notes/a.txt") != "new text" {
		t.Fatalf("cancel: %s", r.raw)
	}
	wantError(t, e.post("shed_lockedit_cancel", map[string]any{"zone": "storage", "path": "notes/a.txt"}, b), "NOT_IN_EDIT_MODE")
}

func TestLockeditReopenRefreshesWorkingCopy(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Storage/data/a.txt", "v1")
	a := conv("chat-a")
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "a.txt"}, a))
	wantOK(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "a.txt", "content": "draft"}, a))
	r := e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "a.txt"}, a)
	wantOK(t, r)
	if r.Data["content"] != "v1" {
		t.Fatalf("re-open must re-copy the original: %s", r.raw)
	}
}

// TestLockeditOpenRace: two conversations race to open the same file, 100 rounds; exactly
// one wins each round, the loser gets FILE_LOCKED naming the winner's conversation.
func TestLockeditOpenRace(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Documents/data/shared.txt", "x")
	body := map[string]any{"zone": "documents", "path": "shared.txt"}
	for round := range 100 {
		var wg sync.WaitGroup
		replies := make([]reply, 2)
		ids := []string{"race-a", "race-b"}
		start := make(chan struct{})
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				replies[i] = e.post("shed_lockedit_open", body, conv(ids[i]))
			}()
		}
		close(start)
		wg.Wait()
		winners := 0
		for i, r := range replies {
			switch {
			case r.Success:
				winners++
				if other := replies[1-i]; other.Error != "FILE_LOCKED" || other.Details["locked_by_conversation"] != ids[i] ||
					other.Details["since"] == nil {
					t.Fatalf("round %d: loser answer: %s", round, other.raw)
				}
				wantOK(t, e.post("shed_lockedit_cancel", body, conv(ids[i])))
			case r.Error != "FILE_LOCKED":
				t.Fatalf("round %d: %s", round, r.raw)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d winners: %s / %s", round, winners, replies[0].raw, replies[1].raw)
		}
	}
}

func TestLockeditOtherConversationRefused(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Storage/data/a.txt", "v1")
	a, b := conv("chat-a"), conv("chat-b")
	body := map[string]any{"zone": "storage", "path": "a.txt"}
	wantOK(t, e.post("shed_lockedit_open", body, a))
	for _, tool := range []string{"shed_lockedit_open", "shed_lockedit_save", "shed_lockedit_cancel"} {
		r := e.post(tool, body, b)
		wantError(t, r, "FILE_LOCKED")
		if r.Details["locked_by_conversation"] != "chat-a" {
			t.Fatalf("%s details: %s", tool, r.raw)
		}
	}
	wantError(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "a.txt", "content": "x"}, b), "FILE_LOCKED")
	// Without a chat id the conversation is "unknown", a different one.
	wantError(t, e.post("shed_lockedit_save", body, nil), "FILE_LOCKED")
	wantOK(t, e.post("shed_lockedit_save", body, a))
}

// TestLockeditGroupOtherUser: in a group zone two users without chat ids share the
// conversation "unknown"; the second is refused, and nothing names the first user.
func TestLockeditGroupOtherUser(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key})
	h := func(user string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": user, "X-Shed-Groups": "team"}
	}
	e.write("groups/team/data/plan.md", "plan")
	body := map[string]any{"zone": "group", "group": "team", "path": "plan.md"}
	r := e.post("shed_lockedit_open", body, h("alice-id"))
	wantOK(t, r)
	if r.Data["zone"] != "Group:team" {
		t.Fatalf("zone name: %s", r.raw)
	}
	r = e.post("shed_lockedit_open", body, h("bob-id"))
	wantError(t, r, "FILE_LOCKED")
	if strings.Contains(r.raw, "alice") || r.Details["locked_by_conversation"] != "unknown" {
		t.Fatalf("lock details leak the holder or miss the conversation: %s", r.raw)
	}
	r = e.post("shed_lockedit_save", body, h("bob-id"))
	wantError(t, r, "NOT_LOCK_OWNER")
	if strings.Contains(r.raw, "alice") {
		t.Fatalf("holder's name leaked: %s", r.raw)
	}
	wantError(t, e.post("shed_lockedit_cancel", body, h("bob-id")), "NOT_LOCK_OWNER")
	wantError(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "group", "group": "team", "path": "plan.md", "content": "x"}, h("bob-id")), "NOT_LOCK_OWNER")
	// A fresh lock in a group cannot be broken by another member (lock_force_after_minutes,
	// groups_locks_test.go), and the refusal does not name the holder either.
	r = e.post("shed_force_unlock", map[string]any{"group": "team", "path": "plan.md"}, h("bob-id"))
	wantError(t, r, "NOT_LOCK_OWNER")
	if strings.Contains(r.raw, "alice") {
		t.Fatalf("holder's name leaked: %s", r.raw)
	}
	// An admin may break it (crash recovery), then the holder's save is refused.
	admin := h("bob-id")
	admin["X-OpenWebUI-User-Role"] = "admin"
	r = e.post("shed_force_unlock", map[string]any{"group": "team", "path": "plan.md"}, admin)
	wantOK(t, r)
	if r.Data["released"] != true || r.Message != "Unlocked: plan.md in Group:team" || strings.Contains(r.raw, "alice") {
		t.Fatalf("force unlock: %s", r.raw)
	}
	wantError(t, e.post("shed_lockedit_save", body, h("alice-id")), "NOT_IN_EDIT_MODE")
	wantError(t, e.post("shed_force_unlock", map[string]any{"group": "other", "path": "plan.md"}, h("bob-id")), "GROUP_ACCESS_DENIED")
}

// TestSaveAfterForceUnlockRefused: a save after another conversation broke the lock is
// refused and the working copy is kept, whether or not the other conversation re-locked.
func TestSaveAfterForceUnlockRefused(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write("users/local/Documents/data/a.txt", "v1")
	a, b := conv("chat-a"), conv("chat-b")
	body := map[string]any{"zone": "documents", "path": "a.txt"}
	wc := "users/local/Documents/editzone/chat-a/a.txt"
	wantOK(t, e.post("shed_lockedit_open", body, a))
	wantOK(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "documents", "path": "a.txt", "content": "A's work"}, a))
	r := e.post("shed_force_unlock", map[string]any{"zone": "documents", "path": "a.txt"}, b)
	wantOK(t, r)
	if r.Data["released"] != true || r.Data["locked_by_conversation"] != "chat-a" {
		t.Fatalf("force unlock: %s", r.raw)
	}
	r = e.post("shed_lockedit_save", body, a)
	wantError(t, r, "NOT_IN_EDIT_MODE")
	if r.Details["working_copy_kept"] != true || readFile(t, e, wc) != "A's work" || readFile(t, e, "users/local/Documents/data/a.txt") != "v1" {
		t.Fatalf("refused save must keep the working copy and the original: %s", r.raw)
	}
	// B takes the lock and saves; A's save is still refused, its copy still kept.
	wantOK(t, e.post("shed_lockedit_open", body, b))
	wantError(t, e.post("shed_lockedit_save", body, a), "FILE_LOCKED")
	wantError(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "documents", "path": "a.txt", "content": "x"}, a), "FILE_LOCKED")
	wantOK(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "documents", "path": "a.txt", "content": "B's work"}, b))
	wantOK(t, e.post("shed_lockedit_save", body, b))
	if readFile(t, e, "users/local/Documents/data/a.txt") != "B's work" || readFile(t, e, wc) != "A's work" {
		t.Fatal("B's save must win and A's copy stay")
	}
	// A discards its kept copy with cancel.
	wantOK(t, e.post("shed_lockedit_cancel", body, a))
	if exists(e, wc) {
		t.Fatal("cancel must remove the kept working copy")
	}
	r = e.post("shed_force_unlock", map[string]any{"zone": "documents", "path": "a.txt"}, b)
	wantOK(t, r)
	if r.Data["released"] != false {
		t.Fatalf("nothing was locked: %s", r.raw)
	}
}
