package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// openUnder reports whether this process (the test server) holds a file open below dir.
func openUnder(dir string) bool {
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
			return true
		}
	}
	return false
}

// TestSQLiteCSVExportStagesInTheWorkDir: output_csv of an encrypted database staged its
// plaintext rows in /tmp/fileshed-csv-* (and left them there after a kill -9). The export is
// now staged in a private folder of encryption.work_dir, which the start sweeps like the
// decrypted copies: while a long export runs nothing is open in os.TempDir and a file is open
// in the work dir, and a leftover there is gone after the next start.
func TestSQLiteCSVExportStagesInTheWorkDir(t *testing.T) {
	if !alone(t) { // sets the environment
		return
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // os.TempDir()
	work := t.TempDir()
	e := startSealed(t, map[string]string{"FILESHED_ENCRYPTION_WORK_DIR": work})
	wantOK(t, sq(e, "s.db", map[string]any{"query": "CREATE TABLE t(v TEXT)"}))
	wantOK(t, sq(e, "s.db", map[string]any{"query": "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 300000) INSERT INTO t SELECT 'secret row ' || i FROM c"}))

	var inTmp, inWork atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			inTmp.CompareAndSwap(false, openUnder(tmp))
			inWork.CompareAndSwap(false, openUnder(work))
			time.Sleep(time.Millisecond)
		}
	}()
	r := sq(e, "s.db", map[string]any{"query": "SELECT v, v, v, v FROM t", "output_csv": "out.csv"})
	close(stop)
	wg.Wait()
	wantOK(t, r)
	if r.Data["rows_exported"] != 300000.0 {
		t.Fatalf("export: %s", r.raw)
	}
	if inTmp.Load() {
		t.Fatal("the export staged a file in os.TempDir")
	}
	if !inWork.Load() {
		t.Fatal("no staging file seen in the work dir (the probe did not see the export)")
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Fatalf("os.TempDir holds %v", left)
	}
	if left := workCopies(work); len(left) > 0 {
		t.Fatalf("the work dir kept %v after the export", left)
	}
	e.sealedOnDisk(zoneDir+"out.csv", "secret row 1")

	// A leftover of a killed export is swept at the next start.
	e.stop()
	left := filepath.Join(work, "m-csv-left")
	if err := os.MkdirAll(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, "export.csv"), []byte("secret row 1\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serve(t, e.cfg)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("the leftover export is still there: %v", err)
	}
}
