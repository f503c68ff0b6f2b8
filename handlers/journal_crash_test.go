package handlers_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// TestKill9DuringJournaledWrite: the server is killed with SIGKILL while it writes a
// 100 MB file over a journaled one, after the change's row was written pending and before
// the rename. After a restart the file is as it was, the pending row is gone (its change
// never happened: no record without its change) and the journal lists only the creation;
// the next write is journaled as usual.
func TestKill9DuringJournaledWrite(t *testing.T) {
	t.Parallel() // owns its binary server and storage, as the other kill -9 tests
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	base := filepath.Join(dir, "data")
	zone := filepath.Join(base, storageDir)
	srv := startBinary(t, bin, base)
	if _, err := srv.call(t, "shed_create_file", []byte(`{"zone":"storage","path":"big.txt","content":"old\n"}`)); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"zone":"storage","path":"big.txt","overwrite":true,"content":"` + strings.Repeat("n", 100<<20) + `"}`)
	done := make(chan error, 1)
	go func() { _, err := srv.call(t, "shed_create_file", body); done <- err }()
	caught := false
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && !caught; time.Sleep(time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("the write finished before the kill (%v): the test did not hit the window", err)
		default:
		}
		if len(tempFiles(zone)) > 0 {
			must(t, srv.cmd.Process.Kill())
			caught = true
		}
	}
	if !caught {
		t.Fatal("no temporary file ever appeared")
	}
	_ = srv.cmd.Wait()
	<-done
	pending := func() int {
		db, err := store.OpenSource(store.Source{Driver: store.SQLite, Path: filepath.Join(base, "fileshed.sqlite")})
		must(t, err)
		defer db.Close()
		rows, err := db.JournalPending(context.Background(), "")
		must(t, err)
		return len(rows)
	}
	if n := pending(); n != 1 {
		t.Fatalf("%d pending rows after the kill: the change's row was not written before it", n)
	}
	srv = startBinary(t, bin, base)
	if n := pending(); n != 0 {
		t.Fatalf("%d pending rows after the restart", n)
	}
	if b, _ := os.ReadFile(filepath.Join(zone, "big.txt")); string(b) != "old\n" {
		t.Fatalf("big.txt after the crash: %d bytes", len(b))
	}
	list, err := srv.call(t, "shed_version", []byte(`{"action":"changes","conversation":"all"}`))
	if err != nil {
		t.Fatal(err)
	}
	if changes := list["data"].(map[string]any)["changes"].([]any); len(changes) != 1 || changes[0].(map[string]any)["op"] != "create" {
		t.Fatalf("the journal after the restart: %v", list)
	}
	if _, err := srv.call(t, "shed_create_file", []byte(`{"zone":"storage","path":"big.txt","overwrite":true,"content":"new\n"}`)); err != nil {
		t.Fatal(err)
	}
	list, _ = srv.call(t, "shed_version", []byte(`{"action":"changes","conversation":"all"}`))
	if changes := list["data"].(map[string]any)["changes"].([]any); len(changes) != 2 {
		t.Fatalf("the next write: %v", list)
	}
}
