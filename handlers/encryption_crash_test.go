package handlers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sealedVar gives the binary the test master key.
const sealedVar = "FILESHED_ENCRYPTION_MASTER_KEY=" + masterKey

// sealedBinary builds the binary, lets prepare fill the storage directory, starts the
// binary on it with the master key and sets encryption up for the user.
func sealedBinary(t *testing.T, prepare func(base string)) (bin, base string, srv *server) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin, base = buildBinary(t), filepath.Join(dir, "data")
	if prepare != nil {
		prepare(base)
	}
	srv = startBinary(t, bin, base, sealedVar)
	if _, err := srv.call(t, "shed_encryption_setup", nil); err != nil {
		t.Fatal(err)
	}
	return bin, base, srv
}

// TestKill9DuringMigrate: the server is killed with SIGKILL while migrate encrypts many
// files written before setup. Every file is then either its plaintext or sealed; after a
// restart a second migrate finishes the rest, every file reads back its exact content (none
// encrypted twice), and no temporary file is left.
func TestKill9DuringMigrate(t *testing.T) {
	t.Parallel() // its own binary process, storage and state; it waits on events (issue 34)
	const n = 400
	content := func(i int) string { return strings.Repeat(fmt.Sprintf("file %03d says hello\n", i), 1000)[:20_000] }
	var zone string
	name := func(i int) string { return filepath.Join(zone, "m", fmt.Sprintf("f%03d.txt", i)) }
	bin, base, srv := sealedBinary(t, func(base string) {
		zone = filepath.Join(base, storageDir)
		must(t, os.MkdirAll(filepath.Join(zone, "m"), 0o700))
		for i := range n {
			must(t, os.WriteFile(name(i), []byte(content(i)), 0o600))
		}
	})
	sealed := func() int { // a rename never leaves a name missing: readHead fails if one is
		k := 0
		for i := range n {
			if bytes.Equal(readHead(t, name(i)), sealedMagic) {
				k++
			}
		}
		return k
	}
	done := make(chan error, 1)
	go func() { _, err := srv.call(t, "shed_encryption_migrate", nil); done <- err }()
	killed := -1
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && killed < 0; {
		select {
		case err := <-done:
			t.Fatalf("migrate finished before the kill (%v): the test did not hit the window", err)
		default:
		}
		if k := sealed(); k >= 20 {
			must(t, srv.cmd.Process.Kill()) // SIGKILL: no deferred cleanup runs
			killed = k
		}
	}
	if killed < 0 {
		t.Fatal("migrate never started")
	}
	_ = srv.cmd.Wait()
	<-done
	after := sealed()
	if after == n {
		t.Fatal("every file was encrypted before the kill: nothing to resume")
	}
	t.Logf("killed with %d of %d files sealed (%d seen at the kill)", after, n, killed)
	for i := range n { // each file is whole: its plaintext, or sealed
		b, err := os.ReadFile(name(i))
		must(t, err)
		if !bytes.HasPrefix(b, sealedMagic) && string(b) != content(i) {
			t.Fatalf("f%03d is neither its plaintext nor sealed after the kill", i)
		}
	}

	srv = startBinary(t, bin, base, sealedVar)
	out, err := srv.call(t, "shed_encryption_migrate", nil)
	if err != nil {
		t.Fatal(err)
	}
	data := out["data"].(map[string]any)
	if data["files_changed"] != float64(n-after) || len(data["errors"].([]any)) > 0 {
		t.Fatalf("resumed migrate: %v (%d were sealed before)", data, after)
	}
	if sealed() != n {
		t.Fatal("not every file is sealed after the resumed migrate")
	}
	for i := range n {
		body, _ := json.Marshal(map[string]any{"zone": "storage", "path": fmt.Sprintf("m/f%03d.txt", i)})
		r, err := srv.call(t, "shed_read", body)
		if err != nil {
			t.Fatal(err)
		}
		got := r["data"].(map[string]any)["content"]
		if got != content(i) {
			t.Fatalf("f%03d reads %.40q... (encrypted twice?)", i, got)
		}
	}
	st, err := srv.call(t, "shed_encryption_status", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := st["data"].(map[string]any); d["files_encrypted"] != float64(n) || d["files_unencrypted"] != 0.0 {
		t.Fatalf("status after the resumed migrate: %v", d)
	}
	// A temporary file the kill left is swept in the background from start-up.
	for deadline := time.Now().Add(20 * time.Second); len(tempFiles(base)) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	noTemp(t, base)
}

// TestKill9DuringEncryptedExec: the server is killed with SIGKILL while a command runs on
// the decrypted mirror of an encrypted zone (plaintext on disk under .plain). The next start
// removes the mirror: no plaintext is left, the zone is intact.
func TestKill9DuringEncryptedExec(t *testing.T) {
	t.Parallel() // its own binary process, storage and state; it waits on events (issue 34)
	bin, base, srv := sealedBinary(t, nil)
	const secret = "mirror secret 4242\n"
	if _, err := srv.call(t, "shed_create_file", []byte(`{"zone":"storage","path":"s.txt","content":"mirror secret 4242\n"}`)); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _ = srv.call(t, "shed_exec", []byte(`{"zone":"storage","cmd":"sleep","args":["5"],"timeout":10}`))
	}()
	plainDir := filepath.Join(base, ".plain")
	for deadline := time.Now().Add(20 * time.Second); len(plainAnywhere(t, plainDir, "mirror secret 4242")) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no decrypted mirror appeared while the command ran")
		}
	}
	must(t, srv.cmd.Process.Kill())
	_ = srv.cmd.Wait()
	if len(plainAnywhere(t, base, "mirror secret 4242")) == 0 {
		t.Fatal("the kill left no mirror: nothing to recover")
	}

	srv = startBinary(t, bin, base, sealedVar)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		left := plainAnywhere(t, base, "mirror secret 4242")
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("plaintext left after the restart: %v", left)
		}
	}
	r, err := srv.call(t, "shed_read", []byte(`{"zone":"storage","path":"s.txt"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := r["data"].(map[string]any)["content"]; got != secret {
		t.Fatalf("s.txt after the restart: %q", got)
	}
}
