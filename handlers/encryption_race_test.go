package handlers_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestEncryptionDisableAndMigrateAtOnce (issue 24, item 5): shed_encryption disable and
// migrate sent at the same time, many times over, in both orders. Whichever runs first,
// the account ends consistent: when the status is disabled no file is encrypted on disk
// (so a command reads plaintext); a migrate that comes after the disable answers
// ENCRYPTION_NOT_ENABLED instead of sealing every file of a disabled account.
func TestEncryptionDisableAndMigrateAtOnce(t *testing.T) {
	t.Parallel() // owns its server; waits more than it computes (issue 34)
	e := startSealed(t, nil)
	const files = 30
	for i := range files {
		wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": fmt.Sprintf("f%02d.txt", i),
			"content": fmt.Sprintf("plain text %02d\n", i)}, nil))
	}
	orders := map[string]int{}
	for round := range 24 {
		if round > 0 {
			wantOK(t, e.post("shed_encryption", map[string]any{"action": "setup"}, nil)) // active again, files plain
		}
		// Rounds alternate: both at once, disable a few milliseconds ahead, migrate ahead.
		var head [2]time.Duration
		if round%3 > 0 {
			head[round%3-1] = 5 * time.Millisecond
		}
		var wg sync.WaitGroup
		var disable, migrate reply
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			time.Sleep(head[1])
			disable = e.post("shed_encryption", map[string]any{"action": "disable", "confirm": true}, nil)
		})
		wg.Go(func() {
			<-start
			time.Sleep(head[0])
			migrate = e.post("shed_encryption", map[string]any{"action": "migrate"}, nil)
		})
		close(start)
		wg.Wait()
		wantOK(t, disable)
		if migrate.Success {
			orders["migrate first"]++
		} else {
			wantError(t, migrate, "ENCRYPTION_NOT_ENABLED")
			orders["disable first"]++
		}
		st := e.post("shed_encryption", map[string]any{"action": "status"}, nil)
		wantOK(t, st)
		if st.Data["status"] != "disabled" || st.Data["files_encrypted"] != 0.0 || st.Data["files_unencrypted"] != float64(files) {
			t.Fatalf("round %d (migrate: %s): status %v", round, migrate.raw, st.Data)
		}
		for i := range files {
			raw, err := os.ReadFile(filepath.Join(e.base, zoneDir, fmt.Sprintf("f%02d.txt", i)))
			if err != nil || bytes.HasPrefix(raw, sealedMagic) {
				t.Fatalf("round %d: f%02d.txt encrypted on disk in a disabled account (%v)", round, i, err)
			}
		}
		r := e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "cat", "args": []string{"f07.txt"}}, nil)
		wantOK(t, r)
		if r.Data["stdout"] != "plain text 07\n" {
			t.Fatalf("round %d: a command reads %q", round, r.Data["stdout"])
		}
	}
	t.Logf("orders: %v", orders)
}
