package handlers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// sealedZone starts an encrypted Storage holding files written by fill (plain on disk,
// then encrypted by migrate).
func sealedZone(t *testing.T, vars map[string]string, fill func(e *env)) *env {
	t.Helper()
	e := startSealed(t, vars)
	fill(e)
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "migrate"}, nil))
	return e
}

// sealedClones fills an encrypted Storage with files from..n-1 of the same content, fast:
// one is written by the server, the others are copies of its bytes (a file's key depends on
// the user's key and its own salt, not on its name), spread over 20 folders.
func (e *env) sealedClones(from, n int, content string) {
	e.t.Helper()
	wantOK(e.t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "seed.txt", "content": content, "overwrite": true}, nil))
	raw, err := os.ReadFile(filepath.Join(e.base, execDir, "seed.txt"))
	if err != nil {
		e.t.Fatal(err)
	}
	for i := from; i < n; i++ {
		e.write(fmt.Sprintf("%sd%02d/f%06d.txt", execDir, i%20, i), string(raw))
	}
}

// TestEncryptedExecTimeoutBoundsCopy (issue 24 item 13): in an encrypted Storage of
// thousands of files, `ls` with timeout=1 answers TIMEOUT when the timeout ends the copy,
// before ls starts, the decrypted copy removed; before, the copy of the whole zone ran
// unbounded (14.9 s for 100,000 files) and the command then ran with its full timeout. How
// many files make the copy outlast one second depends on the machine: the test times an
// unbounded copy of 2,000 first and adds files until the copy would take three seconds
// (issue 34: a fixed 6,000 files were copied within the second once, beside parallel tests).
func TestEncryptedExecTimeoutBoundsCopy(t *testing.T) {
	e := startSealed(t, nil)
	const first = 2000 // the probe
	e.sealedClones(0, first, "some content\n")
	e.sealedOnDisk(execDir+"d00/f000000.txt", "some content")
	t0 := time.Now()
	wantOK(t, e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "ls", "args": []string{"-R"}, "timeout": 120}, nil))
	n := first
	if took := time.Since(t0); took < 3*time.Second {
		n = min(int(float64(first)*float64(3*time.Second)/float64(max(took, time.Millisecond))), 90_000) // under quota_files_per_user
		e.sealedClones(first, n, "some content\n")
	}
	t0 = time.Now()
	r := e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "ls", "args": []string{"-R"}, "timeout": 1}, nil)
	took := time.Since(t0)
	t.Logf("ls -R of %d encrypted files with timeout=1: %v, %s %s", n, took, r.Error, r.Message)
	// The event that tells the bounded copy from the old unbounded one: the deadline ended
	// the copy, before ls started (before, the copy ran whole and ls then had its full
	// timeout). The clock only guards against a hang (issue 34: 3 s failed under load).
	if r.Error != "TIMEOUT" || !strings.Contains(r.Message, "before ls started") || took > 10*time.Second ||
		r.Details["timeout"] != 1.0 || !strings.Contains(r.Hint, "timeout") {
		t.Fatalf("answered after %v: %s %s %v %s", took, r.Error, r.Message, r.Details, r.Hint)
	}
	if n := e.mirrors(); n != 0 {
		t.Fatalf("%d decrypted copies left", n)
	}
	// A command naming its file gets a copy of that file only: it runs within timeout=1.
	r = e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "cat", "args": []string{"d07/f000007.txt"}, "timeout": 1}, nil)
	wantOK(t, r)
	if r.Data["stdout"] != "some content\n" {
		t.Fatalf("cat: %s", r.raw)
	}
}

// TestEncryptedExecWriteBackBoundedByTimeout (issue 24 item 13): a command that makes
// thousands of files in an encrypted Storage (split of one file: its copy is that file only)
// with timeout=1 answers TIMEOUT within the timeout and a margin, whether the deadline falls
// in its run or in its write-back (that depends on the machine; TestMirrorDeadlineCutsWholeEntries
// in core cuts the write-back at chosen points): every file that reached the zone is whole,
// no temporary file or decrypted copy is left, and the quota counts exactly those files. How
// many files outlast one second depends on the machine: the test times an unbounded split
// into 1,000 files first and splits a file of as many lines as would take three seconds, at
// least 3,000 (issue 34: 3,000 could be written back within the second on a fast machine).
func TestEncryptedExecWriteBackBoundedByTimeout(t *testing.T) {
	numbered := func(n int) string {
		var lines strings.Builder
		for i := range n {
			fmt.Fprintf(&lines, "line%05d\n", i) // 10 bytes each
		}
		return lines.String()
	}
	e := sealedZone(t, nil, func(e *env) {
		e.write(execDir+"lines.txt", numbered(1000)) // the probe
		e.write(execDir+"parts/keep.txt", "kept\n")
		e.write(execDir+"calibration/keep.txt", "kept\n")
	})
	split := func(dest string, timeout int) reply {
		return e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "split", "args": []string{"-l", "1", "-a", "5", "-d", "lines.txt", dest}, "timeout": timeout}, nil)
	}
	t0 := time.Now()
	if r := split("calibration/p", 120); !r.Success || r.Data["returncode"] != 0.0 {
		t.Fatalf("the unbounded split: %s", r.raw)
	}
	n := 3000
	if took := time.Since(t0); took < time.Second {
		n = min(max(n, int(1000*float64(3*time.Second)/float64(max(took, time.Millisecond)))), 60_000)
	}
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "lines.txt", "content": numbered(n), "overwrite": true}, nil))
	wantOK(t, e.post("shed_delete", map[string]any{"zone": "storage", "path": "calibration"}, nil))
	used := e.used(t)
	t0 = time.Now()
	r := split("parts/p", 1)
	took := time.Since(t0)
	wantError(t, r, "TIMEOUT")
	entries, err := os.ReadDir(filepath.Join(e.base, execDir, "parts"))
	if err != nil {
		t.Fatal(err)
	}
	written := len(entries) - 1 // keep.txt
	t.Logf("split into %d files with timeout=1: %v, %d written back: %s", n, took, written, r.raw)
	// The margin over the 1 s timeout is the measure and settlement after the cut (thousands
	// of names, under -race on a loaded machine); before the bound it was the whole copy.
	if took > 6*time.Second || written >= n || r.Details["changes_not_saved"] == nil {
		t.Fatalf("answered after %v with %d of %d files written back: %s", took, written, n, r.raw)
	}
	for _, d := range entries {
		if d.Name() == "keep.txt" {
			continue
		}
		fi, err := d.Info()
		if err != nil || fi.Size() != 10+48+16 { // a whole encrypted line: header, one segment's tag
			t.Fatalf("%s: %v bytes on disk, %v", d.Name(), fi.Size(), err)
		}
	}
	noTemp(t, e.base)
	if n := e.mirrors(); n != 0 {
		t.Fatalf("%d decrypted copies left", n)
	}
	if got := e.used(t); got != used+int64(10*written) {
		t.Fatalf("usage %d, want %d + %d written back", got, used, 10*written)
	}
	if written > 0 {
		name := entries[0].Name() // "keep.txt" sorts before the parts
		if name == "keep.txt" {
			name = entries[1].Name()
		}
		r = e.post("shed_read", map[string]any{"zone": "storage", "path": "parts/" + name}, nil)
		wantOK(t, r)
		if want := fmt.Sprintf("line%s\n", strings.TrimPrefix(name, "p")); r.Data["content"] != want {
			t.Fatalf("%s reads %q, want %q", name, r.Data["content"], want)
		}
	}
}

// TestEncryptedExecWaitsAreBounded (issue 24 item 13): in an encrypted Storage every
// command, read-only ones too, waits for the owner's turn holding a command slot, within
// its own timeout: behind a running `sleep 4`, an `ls` (timeout=3) holding the user's
// second slot answers TIMEOUT after its timeout, another call finds no slot and answers
// TOO_MANY_COMMANDS after the slot wait, and one with timeout=1 answers TIMEOUT at once
// its timeout ends. Before, all of them queued on the owner lock without limit.
func TestEncryptedExecWaitsAreBounded(t *testing.T) {
	e := sealedZone(t, map[string]string{"FILESHED_EXEC_MAX_PER_USER": "2"}, func(e *env) {
		e.write(execDir+"a.txt", "alpha\n")
	})
	ls := func(timeout int) map[string]any {
		return map[string]any{"zone": "storage", "cmd": "ls", "timeout": timeout}
	}
	var wg sync.WaitGroup
	var sleeper, first reply
	var firstTook time.Duration
	wg.Go(func() {
		sleeper = e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "sleep", "args": []string{"4"}, "timeout": 10}, nil)
	})
	time.Sleep(500 * time.Millisecond)
	wg.Go(func() {
		t0 := time.Now()
		first = e.post("shed_exec", ls(3), nil)
		firstTook = time.Since(t0)
	})
	time.Sleep(300 * time.Millisecond)
	var busy, short reply
	var busyTook, shortTook time.Duration
	wg.Go(func() {
		t0 := time.Now()
		busy = e.post("shed_exec", ls(8), nil)
		busyTook = time.Since(t0)
	})
	wg.Go(func() {
		t0 := time.Now()
		short = e.post("shed_exec", ls(1), nil)
		shortTook = time.Since(t0)
	})
	wg.Wait()
	wantOK(t, sleeper)
	t.Logf("behind sleep 4: ls(3) %s after %v, ls(8) %s after %v, ls(1) %s after %v",
		first.Error, firstTook, busy.Error, busyTook, short.Error, shortTook)
	wantError(t, first, "TIMEOUT")
	if firstTook > 4*time.Second || !strings.Contains(first.Hint, "one at a time") {
		t.Fatalf("ls waiting for the turn: %v, %s", firstTook, first.raw)
	}
	wantError(t, busy, "TOO_MANY_COMMANDS")
	if busyTook < 1500*time.Millisecond || busyTook > 3500*time.Millisecond || busy.Details["running_yours"] != 2.0 {
		t.Fatalf("ls without a slot: %v, %s", busyTook, busy.raw)
	}
	wantError(t, short, "TIMEOUT")
	if shortTook > 2*time.Second {
		t.Fatalf("ls with timeout=1 answered after %v: %s", shortTook, short.raw)
	}
	if n := e.mirrors(); n != 0 {
		t.Fatalf("%d decrypted copies left", n)
	}
}
