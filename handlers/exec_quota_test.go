package handlers_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// dirSize is the total size of the regular files under dir (names vanishing meanwhile are
// skipped).
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// tarGz builds a gzipped tar of the given members (name -> content).
func tarGz(t testing.TB, members [][2]string) []byte {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, m := range members {
		if err := tw.WriteHeader(&tar.Header{Name: m[0], Mode: 0o600, Size: int64(len(m[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(m[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bomb is 40 members of 3 MB of zeros (~120 MB extracted, ~120 KB packed).
func bomb(t testing.TB, first ...[2]string) []byte {
	members := append([][2]string{}, first...)
	zeros := strings.Repeat("\x00", 3<<20)
	for i := range 40 {
		members = append(members, [2]string{fmt.Sprintf("bomb/part%02d.bin", i), zeros})
	}
	return tarGz(t, members)
}

// peakWatch samples the size of dir every millisecond until stop is called, which returns
// the largest size seen.
func peakWatch(dir string) (stop func() int64) {
	var peak atomic.Int64
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-time.After(time.Millisecond):
			}
			if n := dirSize(dir); n > peak.Load() {
				peak.Store(n)
			}
		}
	}()
	return func() int64 { close(quit); <-done; return peak.Load() }
}

// TestExecTarBombRolledBack (issue 9 finding 2): tar -xzf of 40 × 3 MB into a 10 MB quota
// is stopped during the command, its files are removed, the answer is QUOTA_EXCEEDED, and
// the zone and the recorded usage end under the quota.
func TestExecTarBombRolledBack(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "10"})
	e.write(execDir+"keep.txt", "mine\n")
	// Names that the zone's path rules would rewrite (a backslash, NFD) are removed too.
	e.write(execDir+"bomb.tgz", string(bomb(t, [2]string{`back\slash.bin`, strings.Repeat("x", 2<<20)},
		[2]string{"cafe\u0301.bin", strings.Repeat("y", 2<<20)})))
	stop := peakWatch(filepath.Join(e.base, execDir))
	r := runExec(e, execCall{"zone": "storage", "cmd": "tar", "args": []string{"-xzf", "bomb.tgz"}})
	peak := stop()
	wantError(t, r, "QUOTA_EXCEEDED")
	rb, _ := r.Details["rolled_back"].(map[string]any)
	if rb == nil || rb["removed"].(float64) < 1 {
		t.Fatalf("rolled_back: %s", r.raw)
	}
	for _, name := range []string{"bomb", `back\slash.bin`, "cafe\u0301.bin"} {
		if _, err := os.Lstat(filepath.Join(e.base, execDir, name)); !os.IsNotExist(err) {
			t.Fatalf("%q is still there: %v", name, err)
		}
	}
	limit := int64(10 << 20)
	if got := diskUsage(t, e, "local"); got > limit {
		t.Fatalf("zone holds %d bytes after the call, quota %d", got, limit)
	}
	if used, disk := usage(t, e, "local"), diskUsage(t, e, "local"); used != disk {
		t.Fatalf("recorded usage %d, disk %d", used, disk)
	}
	if readFile(t, e, execDir+"keep.txt") != "mine\n" {
		t.Fatal("an earlier file was touched")
	}
	t.Logf("peak zone size during the command: %.1f MB (quota 10 MB, overshoot %.1f MB)", float64(peak)/(1<<20), float64(max(0, peak-limit))/(1<<20))
	// The bomb writes 118 MB; idle, the watchdog stops it within 1 MB of the quota. On an
	// overloaded host (CI runs every package at once under -race) its 5 ms ticks slip, so the
	// bound checked is "stopped far before the end", not the idle figure.
	if peak > 60<<20 {
		t.Fatalf("peak %d bytes: the watchdog did not stop the command", peak)
	}
}

// TestExecTarBombRolledBackFromHead: in Documents the rollback also restores, from the last
// commit, a file the archive overwrote, and nothing is committed.
func TestExecTarBombRolledBackFromHead(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "10"})
	e.write("users/local/Documents/data/bomb.tgz", string(bomb(t, [2]string{"plan.md", "overwritten\n"})))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "plan.md", "content": "v1\n"}, nil))
	before := history(t, e, ".")
	r := runExec(e, execCall{"zone": "documents", "cmd": "tar", "args": []string{"-xzf", "bomb.tgz"}})
	wantError(t, r, "QUOTA_EXCEEDED")
	if got := readFile(t, e, "users/local/Documents/data/plan.md"); got != "v1\n" {
		t.Fatalf("plan.md = %q, want the committed v1", got)
	}
	if rb := r.Details["rolled_back"].(map[string]any); rb["restored"].(float64) < 1 {
		t.Fatalf("rolled_back: %s", r.raw)
	}
	if after := history(t, e, "."); len(after) != len(before) {
		t.Fatalf("%d commits after the call, %d before", len(after), len(before))
	}
	if got := diskUsage(t, e, "local"); got > 10<<20 {
		t.Fatalf("zone holds %d bytes after the call", got)
	}
	if used, disk := usage(t, e, "local"), diskUsage(t, e, "local"); used != disk {
		t.Fatalf("recorded usage %d, disk %d", used, disk)
	}
}

// TestExecSparseFilesRolledBack: sparse files take no blocks, so the file system's used
// space does not see them; the walk after the command does (the quota counts sizes).
func TestExecSparseFilesRolledBack(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "10"})
	e.write(execDir+"keep.txt", "mine\n")
	r := runExec(e, execCall{"zone": "storage", "cmd": "truncate", "args": []string{"-s", "4M", "a", "b", "c"}})
	wantError(t, r, "QUOTA_EXCEEDED")
	if rb := r.Details["rolled_back"].(map[string]any); rb["removed"] != 3.0 {
		t.Fatalf("rolled_back: %s", r.raw)
	}
	if got := diskUsage(t, e, "local"); got != 5 || usage(t, e, "local") != 5 {
		t.Fatalf("disk %d, recorded %d: want only keep.txt", got, usage(t, e, "local"))
	}
	// Within the quota the same command runs.
	r = runExec(e, execCall{"zone": "storage", "cmd": "truncate", "args": []string{"-s", "3M", "a", "b", "c"}})
	wantOK(t, r)
	if used := usage(t, e, "local"); used != 9<<20+5 {
		t.Fatalf("recorded %d", used)
	}
}

// TestLockeditExecBombStopped: the copy's folder of shed_lockedit_exec is held to the
// remaining quota, which counts the working copy (the command runs under
// shed_exec's per-file limit, watchdog and measure: TestExecBombStopped times the
// watchdog). A locked edit opens text only, so the bomb is truncate making 20 files of 3 MB
// beside a text copy, with 10 MB of quota.
func TestLockeditExecBombStopped(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "10"})
	e.write(execDir+"notes.txt", "a text file\n")
	a := conv("chat-a")
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "notes.txt"}, a))
	editzone := filepath.Join(e.base, "users/local/Storage/editzone")
	args := []string{"-s", "3M"}
	for i := range 20 {
		args = append(args, fmt.Sprintf("part%02d", i))
	}
	r := e.post("shed_lockedit_exec", map[string]any{"zone": "storage", "path": "notes.txt", "cmd": "truncate", "args": args}, a)
	wantError(t, r, "QUOTA_EXCEEDED")
	if got := dirSize(editzone); got > 1<<20 {
		t.Fatalf("the editzone holds %d bytes after the call", got)
	}
	// The locked edit goes on: its copy is as it was.
	r = e.post("shed_lockedit_exec", map[string]any{"zone": "storage", "path": "notes.txt", "cmd": "cat", "args": []string{"."}}, a)
	wantOK(t, r)
	if r.Data["stdout"] != "a text file\n" {
		t.Fatalf("the copy: %s", r.raw)
	}
	usageIsDisk(t, e)
}

// TestExecParallelCopiesStayUnderQuota (finding 2): 10 parallel cp of a 5 MB file into a
// 10 MB quota never leave the zone above the quota. Slots for all of them: each runs (a
// slower state, PostgreSQL, made some wait past the 2 s for a slot: TOO_MANY_COMMANDS).
func TestExecParallelCopiesStayUnderQuota(t *testing.T) {
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "10", "FILESHED_EXEC_MAX_PER_USER": "10", "FILESHED_EXEC_MAX_TOTAL": "10"})
	src := make([]byte, 5<<20)
	_, _ = rand.Read(src)
	e.write(execDir+"src.bin", string(src))
	var wg sync.WaitGroup
	replies := make([]reply, 10)
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = runExec(e, execCall{"zone": "storage", "cmd": "cp", "args": []string{"src.bin", fmt.Sprintf("copy%d.bin", i)}})
		}()
	}
	wg.Wait()
	copied := 0
	for _, r := range replies {
		// Why TIMEOUT is an answer here: the ten queue on the owner's Storage turn, each
		// within its own timeout, and a loaded machine (CI) can make the last wait past it
		// (issue 34). The quota must hold whatever the answer.
		switch {
		case r.Success:
			copied++
		case r.Error != "QUOTA_EXCEEDED" && r.Error != "TIMEOUT":
			t.Errorf("unexpected: %s", r.raw)
		}
	}
	if copied == 0 {
		t.Fatal("no copy ran")
	}
	if got := diskUsage(t, e, "local"); got > 10<<20 {
		t.Fatalf("zone holds %.1f MB after the calls, quota 10 MB", float64(got)/(1<<20))
	}
	if used, disk := usage(t, e, "local"), diskUsage(t, e, "local"); used != disk {
		t.Fatalf("recorded usage %d, disk %d", used, disk)
	}
}

// TestExecParallelAppendsLoseNothing (finding 3): 20 parallel sed -i appends to one file in
// Storage all land. Enough slots for all of them: they queue on the owner's turn, each
// within its own timeout, instead of meeting the fair-share limit (a loaded machine made
// 20 × one command last longer than the 2 s slot wait).
func TestExecParallelAppendsLoseNothing(t *testing.T) {
	e := start(t, map[string]string{"FILESHED_EXEC_MAX_PER_USER": "20", "FILESHED_EXEC_MAX_TOTAL": "40",
		"FILESHED_EXEC_MEMORY_TOTAL_MB": "20480"})
	e.write(execDir+"log.txt", "start\n")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := runExec(e, execCall{"zone": "storage", "cmd": "sed", "args": []string{"-i", fmt.Sprintf("$a line %d", i), "log.txt"}})
			if !r.Success || r.Data["returncode"] != 0.0 {
				t.Errorf("append %d: %s", i, r.raw)
			}
		}()
	}
	wg.Wait()
	got := readFile(t, e, execDir+"log.txt")
	for i := range 20 {
		if !strings.Contains(got, fmt.Sprintf("line %d\n", i)) {
			t.Errorf("line %d lost", i)
		}
	}
	if n := strings.Count(got, "\n"); n != 21 {
		t.Fatalf("%d lines, want 21:\n%s", n, got)
	}
}

// BenchmarkExecWrite is the round trip of a writing command (sed -i on a 1 KB file) in
// Storage and in Documents (commit included), beside the reader cat in Storage: what the
// quota watchdog, the owner's serialisation and the lock snapshot add to a command.
func BenchmarkExecWrite(b *testing.B) {
	e := start(b, nil)
	e.write(execDir+"k.txt", strings.Repeat("x", 1023)+"\n")
	e.write("users/local/Documents/data/k.txt", strings.Repeat("x", 1023)+"\n")
	post := poster(b, e, "shed_exec")
	sed := func(zone string) func(int) {
		return func(i int) {
			post(`{"zone":"` + zone + `","cmd":"sed","args":["-i","s/^./` + string(rune('a'+i%26)) + `/","k.txt"]}`)
		}
	}
	ops := []timed{
		{"cat", func(int) { post(`{"zone":"storage","cmd":"cat","args":["k.txt"]}`) }},
		{"sed-storage", sed("storage")},
		{"sed-documents", sed("documents")},
	}
	for _, op := range ops {
		op.call(0)
	}
	latencies(b, ops...)
}
