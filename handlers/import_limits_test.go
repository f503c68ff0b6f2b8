package handlers_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

// nothingLeft asserts that a failed import left no file (temporary or not) and no usage.
func nothingLeft(t *testing.T, e *env) {
	t.Helper()
	if files := onDisk(t, e, "users/alice-1"); len(files) != 0 {
		t.Fatalf("left behind: %v", files)
	}
	if u := e.usedBy(t, alice("chat-1")); u != 0 {
		t.Fatalf("usage %d after a failed import", u)
	}
}

// TestImportSizeEnforcedWhileStreaming: Open WebUI sending 10x max_file_size_mb, without
// Content-Length, with a lying one, or with metadata that says nothing, is stopped at the
// limit; nothing is left behind and the quota is unchanged.
func TestImportSizeEnforcedWhileStreaming(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		metaSize int64
		d        owuitest.Delivery
	}{
		{"no length, no size in metadata", 0, owuitest.Delivery{NoLength: true}},
		{"metadata lies", 1000, owuitest.Delivery{NoLength: true}},
		{"content length says it all", 0, owuitest.Delivery{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, fake := importWorld(t, map[string]string{"FILESHED_MAX_FILE_SIZE_MB": "1"})
			fake.AddGeneratedFile("alice-1", owui.FileInfo{ID: "f-huge", Filename: "huge.bin", Size: c.metaSize}, 10<<20)
			fake.SetDelivery("f-huge", c.d)
			r := e.post("shed_import", map[string]any{"file_id": "f-huge"}, alice("chat-1"))
			wantError(t, r, "FILE_TOO_LARGE")
			if r.Details["limit"] != float64(1<<20) {
				t.Fatalf("details: %s", r.raw)
			}
			nothingLeft(t, e)
		})
	}
	// A size announced in the metadata is refused before any download.
	e, fake := importWorld(t, map[string]string{"FILESHED_MAX_FILE_SIZE_MB": "1"})
	fake.AddGeneratedFile("alice-1", owui.FileInfo{ID: "f-huge", Filename: "huge.bin", Size: 10 << 20}, 10<<20)
	wantError(t, e.post("shed_import", map[string]any{"file_id": "f-huge"}, alice("chat-1")), "FILE_TOO_LARGE")
	if n := fake.Calls("/api/v1/files/f-huge/content"); n != 0 {
		t.Fatalf("downloaded %d times although the size was known", n)
	}
	// Exactly the limit passes.
	fake.AddGeneratedFile("alice-1", owui.FileInfo{ID: "f-max", Filename: "max.bin"}, 1<<20)
	fake.SetDelivery("f-max", owuitest.Delivery{NoLength: true})
	wantOK(t, e.post("shed_import", map[string]any{"file_id": "f-max"}, alice("chat-1")))
	if !bytes.Equal([]byte(readFile(t, e, aliceUploads+"/max.bin")), owuitest.Pattern(1<<20)) {
		t.Fatal("content differs")
	}
}

// TestImportConnectionDrops: a download cut mid-file keeps nothing and gives the quota back.
func TestImportConnectionDrops(t *testing.T) {
	t.Parallel()
	for _, noLength := range []bool{false, true} {
		t.Run(fmt.Sprintf("no length %v", noLength), func(t *testing.T) {
			e, fake := importWorld(t, nil)
			fake.AddGeneratedFile("alice-1", owui.FileInfo{ID: "f-cut", Filename: "cut.bin", Size: 3 << 20}, 3<<20)
			fake.SetDelivery("f-cut", owuitest.Delivery{CutAfter: 1 << 20, NoLength: noLength})
			r := e.post("shed_import", map[string]any{"file_id": "f-cut"}, alice("chat-1"))
			wantError(t, r, "AUTH_UNAVAILABLE")
			if !strings.Contains(r.Message, "stopped sending") || !strings.Contains(r.Hint, "shed_import") {
				t.Fatalf("answer: %s", r.raw)
			}
			nothingLeft(t, e)
		})
	}
}

// TestImportOpenWebUIFailing: a 500, an outage after sign-in, and a slow but steady server.
func TestImportOpenWebUIFailing(t *testing.T) {
	t.Parallel()
	e, fake := importWorld(t, nil)
	fake.SetDelivery("f-report", owuitest.Delivery{Status: 500})
	r := e.post("shed_import", map[string]any{"file_id": "f-report"}, alice("chat-1"))
	wantError(t, r, "AUTH_UNAVAILABLE")
	if !strings.Contains(r.Hint, "again") {
		t.Fatalf("hint: %s", r.raw)
	}
	nothingLeft(t, e)
	// Slow is not broken: 10 pieces 50 ms apart arrive whole.
	fake.AddGeneratedFile("alice-1", owui.FileInfo{ID: "f-slow", Filename: "slow.bin"}, 640<<10)
	fake.SetDelivery("f-slow", owuitest.Delivery{Chunk: 64 << 10, Pause: 50 * time.Millisecond, NoLength: true})
	wantOK(t, e.post("shed_import", map[string]any{"file_id": "f-slow"}, alice("chat-1")))
	if !bytes.Equal([]byte(readFile(t, e, aliceUploads+"/slow.bin")), owuitest.Pattern(640<<10)) {
		t.Fatal("slow content differs")
	}
}

// TestImportStalledDownload: a download that stops sending (without closing) is abandoned
// after openwebui.timeout_seconds of silence; nothing is kept.
func TestImportStalledDownload(t *testing.T) {
	t.Parallel() // owns its server and fake; the bound is 9 s over the timeout (issue 34)
	e, fake := importWorld(t, map[string]string{"FILESHED_OPENWEBUI_TIMEOUT_SECONDS": "1"})
	fake.AddGeneratedFile("alice-1", owui.FileInfo{ID: "f-stall", Filename: "stall.bin"}, 256<<10)
	fake.SetDelivery("f-stall", owuitest.Delivery{Chunk: 64 << 10, Pause: time.Minute})
	start := time.Now()
	r := e.post("shed_import", map[string]any{"file_id": "f-stall"}, alice("chat-1"))
	wantError(t, r, "AUTH_UNAVAILABLE")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a stalled download held the call for %v", d)
	}
	nothingLeft(t, e)
}

// TestImportConcurrentNearlyFullQuota: 10 imports at once against a quota with room for 3
// files never overshoot, whether the sizes are announced or not.
func TestImportConcurrentNearlyFullQuota(t *testing.T) {
	t.Parallel()
	const size = 300 << 10
	for _, announced := range []bool{true, false} {
		t.Run(fmt.Sprintf("announced %v", announced), func(t *testing.T) {
			e, fake := importWorld(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1"})
			for i := range 10 {
				meta := int64(0)
				if announced {
					meta = size
				}
				id := fmt.Sprintf("f-%d", i)
				fake.AddGeneratedFile("alice-1", owui.FileInfo{ID: id, Filename: id + ".bin", Size: meta}, size)
				fake.SetDelivery(id, owuitest.Delivery{NoLength: !announced, Chunk: 16 << 10})
			}
			var wg sync.WaitGroup
			codes := make([]string, 10)
			for i := range 10 {
				wg.Go(func() {
					r := e.post("shed_import", map[string]any{"file_id": fmt.Sprintf("f-%d", i)}, alice("chat-1"))
					codes[i] = r.Error
				})
			}
			wg.Wait()
			ok := 0
			for _, c := range codes {
				switch c {
				case "":
					ok++
				case "QUOTA_EXCEEDED":
				default:
					t.Fatalf("unexpected answer %s", c)
				}
			}
			files := onDisk(t, e, "users/alice-1")
			used := e.usedBy(t, alice("chat-1"))
			if len(files) != ok || used != int64(ok*size) || used > 1<<20 {
				t.Fatalf("%d imported, files %v, usage %d", ok, files, used)
			}
			if announced && ok != 3 {
				t.Fatalf("%d imports succeeded with room for 3", ok)
			}
		})
	}
}

// TestImportWithAdminKey: in headers (and jwt) mode fileshed has no user token and uses
// openwebui.admin_api_key, checking the file's owner itself; without the key the error
// names the valve.
func TestImportWithAdminKey(t *testing.T) {
	t.Parallel()
	fake := owuitest.New(t)
	fake.AddUser("admin-key", owui.User{ID: "admin-0", Role: "admin"})
	fake.AddFile("alice-1", owui.FileInfo{ID: "f-mine", Filename: "mine.txt"}, []byte("mine"))
	fake.AddFile("bob-2", owui.FileInfo{ID: "f-bob", Filename: "bob.txt"}, []byte("bob only"))
	vars := map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key,
		"FILESHED_OPENWEBUI_URL": fake.URL, "FILESHED_OPENWEBUI_ADMIN_API_KEY": "admin-key"}
	h := map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "alice-1", "X-OpenWebUI-Chat-Id": "chat-1"}
	e := start(t, vars)
	wantOK(t, e.post("shed_import", map[string]any{"file_id": "f-mine"}, h))
	if readFile(t, e, aliceUploads+"/mine.txt") != "mine" {
		t.Fatal("not imported")
	}
	other := e.post("shed_import", map[string]any{"file_id": "f-bob"}, h)
	missing := e.post("shed_import", map[string]any{"file_id": "f-none"}, h)
	wantError(t, other, "FILE_NOT_FOUND")
	if strings.ReplaceAll(other.Message, "f-bob", "ID") != strings.ReplaceAll(missing.Message, "f-none", "ID") {
		t.Fatalf("another user's file reads differently from a missing one: %q / %q", other.Message, missing.Message)
	}
	wantError(t, e.post("shed_import", map[string]any{"import_all": true}, h), "MISSING_FILE_ID")

	delete(vars, "FILESHED_OPENWEBUI_ADMIN_API_KEY")
	e = start(t, vars)
	r := e.post("shed_import", map[string]any{"file_id": "f-mine"}, h)
	wantError(t, r, "AUTH_UNAVAILABLE")
	if !strings.Contains(r.Message+r.Hint, "openwebui.admin_api_key") {
		t.Fatalf("the valve is not named: %s", r.raw)
	}
	// No Open WebUI configured at all.
	r = start(t, nil).post("shed_import", map[string]any{"file_id": "f-mine"}, nil)
	wantError(t, r, "AUTH_UNAVAILABLE")
	if !strings.Contains(r.Hint, "openwebui.url") {
		t.Fatalf("the valve is not named: %s", r.raw)
	}
}
