package handlers_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/confine"
)

// buildBinary returns the fileshed binary, built once for the whole test process (issue 34:
// a build per test linked the server again, 3 to 5 s each, thirteen times), in a folder of
// its own that TestMain removes.
func buildBinary(t testing.TB) string {
	t.Helper()
	bin, err := sharedBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// sharedBinary builds the binary at its first call; later calls wait for it and share it.
var sharedBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "fileshed-test-bin-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "fileshed")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build: %v\n%s", err, out)
	}
	return bin, nil
})

// binDir is the folder of the shared binary ("" until built).
var binDir string

// usedBytes is shed_stats' accounted usage from a running binary.
func usedBytes(t *testing.T, srv *server) int64 {
	t.Helper()
	st, err := srv.call(t, "shed_stats", nil)
	if err != nil {
		t.Fatal(err)
	}
	return int64(st["data"].(map[string]any)["total"].(map[string]any)["used_bytes"].(float64))
}

// TestKill9DuringBridgeMoves: the server is killed with SIGKILL while it moves files one
// after another from Uploads to Documents (rename + commit each). Afterwards, and after a
// restart, every file is at exactly one of the two places with its content, the usage is
// exact, and moves work again.
func TestKill9DuringBridgeMoves(t *testing.T) {
	t.Parallel() // its own binary process, storage and state; it waits on events (issue 34)
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	base := filepath.Join(dir, "data")
	up, docs := filepath.Join(base, uploadsDir), filepath.Join(base, documentsDir)
	const n = 400
	var total int64
	for i := range n {
		content := strings.Repeat(fmt.Sprint(i), 100+i)
		total += int64(len(content))
		p := filepath.Join(up, fmt.Sprintf("f%03d", i))
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(content), 0o600))
	}
	srv := startBinary(t, bin, base)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			body := fmt.Sprintf(`{"src":"f%03d","dest":"d/f%03d"}`, i, i)
			if _, err := srv.call(t, "shed_move_uploads_to_documents", []byte(body)); err != nil {
				return // the kill
			}
		}
	}()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Millisecond) {
		entries, _ := os.ReadDir(filepath.Join(docs, "d"))
		if len(entries) >= 40 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the moves did not start")
		}
	}
	must(t, srv.cmd.Process.Kill())
	_ = srv.cmd.Wait()
	<-done
	check := func(when string) int {
		t.Helper()
		moved := 0
		for i := range n {
			want := strings.Repeat(fmt.Sprint(i), 100+i)
			a, errA := os.ReadFile(filepath.Join(up, fmt.Sprintf("f%03d", i)))
			b, errB := os.ReadFile(filepath.Join(docs, "d", fmt.Sprintf("f%03d", i)))
			switch {
			case errA == nil && errB == nil:
				t.Fatalf("%s: f%03d is at both places", when, i)
			case errA != nil && errB != nil:
				t.Fatalf("%s: f%03d is lost", when, i)
			case errA == nil && string(a) != want, errB == nil && string(b) != want:
				t.Fatalf("%s: f%03d has the wrong content", when, i)
			}
			if errB == nil {
				moved++
			}
		}
		return moved
	}
	moved := check("after the kill")
	if moved == n {
		t.Fatal("every move finished before the kill: the test did not hit the window")
	}
	srv = startBinary(t, bin, base)
	check("after the restart")
	// The files (total bytes, at one place or the other) and the Documents history.
	if u, disk := usedBytes(t, srv), diskUsageAt(t, base, "local"); u != disk || u < total {
		t.Fatalf("usage %d after restart, want %d (%d of files)", u, disk, total)
	}
	if _, err := srv.call(t, "shed_move_uploads_to_documents", []byte(fmt.Sprintf(`{"src":"f%03d","dest":"d/f%03d"}`, n-1, n-1))); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.call(t, "shed_maintenance", nil); err != nil {
		t.Fatal(err)
	}
	if got := check("after more moves"); got != moved+1 {
		t.Fatalf("%d moved, want %d", got, moved+1)
	}
}

// TestKill9DuringBridgeCopy: a folder copy killed half-way leaves no half-copied
// destination; after a restart its staging folder is swept and the usage is exact.
func TestKill9DuringBridgeCopy(t *testing.T) {
	t.Parallel() // its own binary process, storage and state; it waits on events (issue 34)
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	base := filepath.Join(dir, "data")
	src, docs := filepath.Join(base, storageDir, "big"), filepath.Join(base, documentsDir)
	must(t, os.MkdirAll(src, 0o700))
	chunk := strings.Repeat("x", 4<<20)
	const files = 40
	for i := range files {
		must(t, os.WriteFile(filepath.Join(src, fmt.Sprintf("part%02d", i)), []byte(chunk), 0o600))
	}
	srv := startBinary(t, bin, base)
	done := make(chan error, 1)
	go func() {
		_, err := srv.call(t, "shed_copy_storage_to_documents", []byte(`{"src":"big","dest":"big"}`))
		done <- err
	}()
	staged := func() []string {
		var out []string
		entries, _ := os.ReadDir(docs)
		for _, e := range entries {
			if confine.IsTempName(e.Name()) {
				out = append(out, e.Name())
			}
		}
		return out
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Millisecond) {
		if s := staged(); len(s) > 0 {
			if parts, _ := os.ReadDir(filepath.Join(docs, s[0])); len(parts) >= 2 {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the copy finished before the kill (%v)", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no staging folder appeared")
		}
	}
	must(t, srv.cmd.Process.Kill())
	_ = srv.cmd.Wait()
	<-done
	if _, err := os.Stat(filepath.Join(docs, "big")); err == nil {
		t.Fatal("a half-copied destination is visible")
	}
	srv = startBinary(t, bin, base)
	want := int64(files * len(chunk))
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if len(staged()) == 0 && usedBytes(t, srv) == want {
			break
		}
	}
	if s := staged(); len(s) > 0 {
		t.Fatalf("staging left after restart: %v", s)
	}
	if u := usedBytes(t, srv); u != want {
		t.Fatalf("usage %d after recovery, want %d", u, want)
	}
	if _, err := srv.call(t, "shed_copy_storage_to_documents", []byte(`{"src":"big","dest":"big"}`)); err != nil {
		t.Fatal(err)
	}
}
