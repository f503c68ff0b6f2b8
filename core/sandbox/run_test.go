package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/internal/testtool"
)

func TestRunBasics(t *testing.T) {
	t.Parallel()
	d := zone(t)
	cases := []struct {
		name     string
		argv     []string
		stdout   string
		code     int
		binary   bool
		readOnly bool
	}{
		{"Cat", []string{"/usr/bin/cat", "a.txt"}, "hello\nworld\n", 0, false, false},
		{"ExitCode", []string{"/usr/bin/false"}, "", 1, false, false},
		{"StdinIsDevNull", []string{"/usr/bin/cat"}, "", 0, false, false},
		{"BinaryOutput", []string{"/usr/bin/head", "-c", "100", "/dev/zero"}, "[binary output: 100 bytes]", 0, true, false},
		{"InvalidUTF8", []string{"/usr/bin/printf", `\xff\xfe`}, "[binary output: 2 bytes]", 0, true, false},
		{"ReadOnlyZoneReads", []string{"/usr/bin/cat", "a.txt"}, "hello\nworld\n", 0, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := spec(d, tc.argv...)
			s.ReadOnly = tc.readOnly
			res, err := Run(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if res.Stdout != tc.stdout || res.ExitCode != tc.code || res.StdoutBinary != tc.binary {
				t.Fatalf("got %+v", res)
			}
			if res.Sandboxed != Detect().Available {
				t.Fatalf("Sandboxed=%v, Landlock available=%v", res.Sandboxed, Detect().Available)
			}
		})
	}
}

func TestRunLaunchFailure(t *testing.T) {
	t.Parallel()
	d := zone(t)
	_, err := Run(context.Background(), spec(d, "/nonexistent/tool"))
	if err == nil {
		t.Fatal("no error for a missing executable")
	}
}

func TestRequiredMode(t *testing.T) {
	t.Parallel()
	s := spec(zone(t), "/usr/bin/true")
	s.Mode = ModeRequired
	res, err := Run(context.Background(), s)
	if Detect().Available {
		// With Landlock, required mode runs the command confined.
		if err != nil || !res.Sandboxed || res.ExitCode != 0 {
			t.Fatalf("required mode with Landlock: %+v, %v", res, err)
		}
		return
	}
	if err != ErrSandboxUnavailable {
		t.Fatalf("required mode without Landlock: err = %v", err)
	}
}

// TestYesFloodUsesConstantMemory: a command printing without end is cut by the
// timeout and only head+tail are kept.
func TestYesFloodUsesConstantMemory(t *testing.T) {
	if !testtool.Alone(t, nil, nil) { // it reads the process's heap
		return
	}
	d := zone(t)
	c, err := Prepare(Request{Cmd: "yes", Kind: ReadWrite, Confine: confineIn(d)})
	if err != nil {
		t.Fatal(err)
	}
	s := spec(d, c.Argv...)
	s.Timeout, s.MaxOutput = 2*time.Second, 1000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if !res.TimedOut || !res.Truncated || len(res.Stdout) > 1100 || !strings.Contains(res.Stdout, " cut ...]") {
		t.Fatalf("timedOut=%v truncated=%v len=%d", res.TimedOut, res.Truncated, len(res.Stdout))
	}
	if grow := int64(after.HeapAlloc) - int64(before.HeapAlloc); grow > 8<<20 {
		t.Fatalf("heap grew by %d bytes", grow)
	}
	t.Logf("yes: %s", res.Stdout[strings.Index(res.Stdout, "["):strings.Index(res.Stdout, "]")+1])
}

// TestTimeoutKillsWholeGroup: sleep 999 and a background grandchild both die.
func TestTimeoutKillsWholeGroup(t *testing.T) {
	t.Parallel()
	d := zone(t)
	marker := "999.4242"
	sleep, _ := exec.LookPath("sleep")
	s := spec(d, "/bin/sh", "-c", "sleep "+marker+" & sleep "+marker)
	s.Exec = []string{sleep}
	s.Timeout = time.Second
	start := time.Now()
	res, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || time.Since(start) > 5*time.Second {
		t.Fatalf("not timed out: %+v after %v", res, time.Since(start))
	}
	// The group was sent SIGKILL: each member is gone once the kernel has delivered it (a
	// zombie's cmdline is empty), awaited here rather than assumed after a fixed sleep.
	survivor := func() string {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), marker) {
				return fmt.Sprintf("%s %q", p, b)
			}
		}
		return ""
	}
	for deadline := time.Now().Add(5 * time.Second); survivor() != ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("survivor 5 s after the timeout: %s", survivor())
		}
	}
}

// TestFileSizeLimitStopsHugeWrite: head -c 1G past the remaining quota is stopped
// by RLIMIT_FSIZE, whether it writes through stdout_file or by itself.
func TestFileSizeLimitStopsHugeWrite(t *testing.T) {
	t.Parallel()
	d := zone(t)
	if err := os.Truncate(filepath.Join(d, "a.txt"), 2<<30); err != nil { // sparse source
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(d, "out.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	c, err := Prepare(Request{Cmd: "head", Args: []string{"-c", "1G", "a.txt"}, Kind: ReadWrite, Confine: confineIn(d)})
	if err != nil {
		t.Fatal(err)
	}
	s := spec(d, c.Argv...)
	s.Stdout, s.FileSizeBytes = out, 1<<20
	res, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := out.Stat()
	if res.ExitCode == 0 || fi.Size() > 1<<20 {
		t.Fatalf("rc=%d size=%d", res.ExitCode, fi.Size())
	}
	c, err = Prepare(Request{Cmd: "cp", Args: []string{"a.txt", "copy"}, Kind: ReadWrite, Confine: confineIn(d)})
	if err != nil {
		t.Fatal(err)
	}
	s = spec(d, c.Argv...)
	s.FileSizeBytes = 1 << 20
	res, err = Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(d, "copy")); res.ExitCode == 0 || (err == nil && fi.Size() > 1<<20) {
		t.Fatalf("cp past FSIZE: rc=%d", res.ExitCode)
	}
}

func TestCaptureHeadTail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		max    int
		writes []string
		want   string
		trunc  bool
		binary bool
	}{
		{"Fits", 10, []string{"abc", "def"}, "abcdef", false, false},
		{"Exact", 6, []string{"abcdef"}, "abcdef", false, false},
		{"HeadAndTail", 4, []string{"ab", "cdef", "gh"}, "ab\n[... 4 bytes (1 line) cut ...]\ngh", true, false},
		{"ManySmallWrites", 4, strings.Split("0123456789", ""), "01\n[... 6 bytes (1 line) cut ...]\n89", true, false},
		{"NulIsBinary", 100, []string{"a\x00b"}, "[binary output: 3 bytes]", false, true},
		{"NulInOmittedPartIsBinary", 4, []string{"ab", "\x00\x00\x00", "cd"}, "[binary output: 7 bytes]", true, true},
		{"CutRuneIsText", 4, []string{"aé", "xxxx", "éb"}, "aé\n[... 4 bytes (1 line) cut ...]\néb", true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(tc.max)
			for _, w := range tc.writes {
				c.Write([]byte(w))
			}
			got, bin, tr := c.result()
			if tc.name == "CutRuneIsText" {
				if bin || !tr {
					t.Fatalf("binary=%v truncated=%v %q", bin, tr, got)
				}
				return
			}
			if got != tc.want || tr != tc.trunc || bin != tc.binary {
				t.Fatalf("got %q binary=%v truncated=%v", got, bin, tr)
			}
		})
	}
}
