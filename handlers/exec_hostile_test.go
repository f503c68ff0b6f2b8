package handlers_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Hostile commands through the real server (issue 9's findings, issue 11's archive
// cases): each is refused, or runs and leaves nothing behind.

const otherSecret = "users/other/Storage/data/secret.txt"

// TestExecOneString: an operand is checked as the very string the program opens.
// A literal directory named `a\b\c\d\e` (one name to the kernel, five to the zone
// check) or an NFD-named symlink made by tar must not carry a path out of the zone,
// for commands Landlock does not mediate (stat, ls -l, du, readlink, touch -d) too.
func TestExecOneString(t *testing.T) {
	t.Parallel()
	// The policy is what holds here: with Landlock, and without it (where cat and cp
	// reached the other user's data before).
	for _, mode := range []string{"required", "off"} {
		t.Run("exec_sandbox="+mode, func(t *testing.T) { oneString(t, mode) })
	}
}

func oneString(t *testing.T, mode string) {
	e := start(t, map[string]string{"FILESHED_EXEC_SANDBOX": mode})
	e.write(execDir+"a.txt", "a.b\\c\n")
	secret := e.write(otherSecret, "other-user-secret\n")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(secret, old, old); err != nil {
		t.Fatal(err)
	}
	wantError(t, runExec(e, execCall{"zone": "storage", "cmd": "mkdir", "args": []string{`a\b\c\d\e`}}), "INVALID_PATH")
	// The directory exists anyway (made before this rule, or by an archive).
	if err := os.Mkdir(filepath.Join(e.base, execDir, `a\b\c\d\e`), 0o700); err != nil {
		t.Fatal(err)
	}
	out := `a\b\c\d\e/../../../../other/Storage/data/secret.txt`
	for _, args := range [][]string{
		{"cat", out}, {"cp", out, "stolen.txt"}, {"stat", out}, {"ls", "-l", out}, {"du", "-b", out},
		{"readlink", out}, {"touch", "-d", "2030-01-01", out}, {"wc", "-c", out}, {"head", "-c", "5", out},
	} {
		t.Run(args[0], func(t *testing.T) {
			r := runExec(e, execCall{"zone": "storage", "cmd": args[0], "args": args[1:]})
			wantError(t, r, "INVALID_PATH")
			if !strings.Contains(r.Hint, "'/'") || strings.Contains(r.raw, "other-user-secret") {
				t.Fatalf("%s", r.raw)
			}
		})
	}
	if fi, err := os.Stat(secret); err != nil || !fi.ModTime().Equal(old) {
		t.Fatalf("the other user's file was touched: %v %v", fi.ModTime(), err)
	}
	if _, err := os.Stat(filepath.Join(e.base, execDir, "stolen.txt")); err == nil {
		t.Fatal("the other user's file was copied")
	}

	// An NFD-named symlink to the other user's data, extracted by tar.
	nfd := "e\u0301"
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: nfd, Typeflag: tar.TypeSymlink, Linkname: "../../../other/Storage/data", Mode: 0o777}); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	e.write(execDir+"nfd.tar", buf.String())
	wantOK(t, runExec(e, execCall{"zone": "storage", "cmd": "tar", "args": []string{"-xf", "nfd.tar"}}))
	for _, args := range [][]string{{"cat", nfd + "/secret.txt"}, {"stat", nfd + "/secret.txt"}, {"ls", "-l", nfd + "/"}} {
		r := runExec(e, execCall{"zone": "storage", "cmd": args[0], "args": args[1:]})
		wantError(t, r, "INVALID_PATH")
		if !strings.Contains(r.Hint, "NFC") {
			t.Fatalf("hint: %s", r.raw)
		}
	}
	// The NFC spelling names another (missing) file.
	r := runExec(e, execCall{"zone": "storage", "cmd": "cat", "args": []string{"\u00e9/secret.txt"}})
	if r.Success && (r.Data["returncode"] == 0.0 || strings.Contains(r.raw, "other-user-secret")) {
		t.Fatalf("NFC spelling: %s", r.raw)
	}
	// ".." after a symlink climbs from the link's target: refused, with the clean path.
	r = runExec(e, execCall{"zone": "storage", "cmd": "cat", "args": []string{"sub/../a.txt"}})
	wantError(t, r, "INVALID_PATH")
	if !strings.Contains(r.Hint, "'a.txt'") {
		t.Fatalf("hint: %s", r.raw)
	}
	// Backslashes in arguments that are not paths keep working.
	r = runExec(e, execCall{"zone": "storage", "cmd": "grep", "args": []string{"-c", `a\.b\\c`, "a.txt"}})
	wantOK(t, r)
	if r.Data["stdout"] != "1\n" {
		t.Fatalf("grep with a backslash regex: %v", r.Data)
	}
	r = runExec(e, execCall{"zone": "storage", "cmd": "sed", "args": []string{`s/\\/|/`, "a.txt"}})
	wantOK(t, r)
	if r.Data["stdout"] != "a.b|c\n" {
		t.Fatalf("sed with a backslash script: %v", r.Data)
	}
}

// TestExecTarHostileEntries: `tar -xf` of an archive with a FIFO, a character
// device, a hard link to /etc/passwd, a symlink out and a set-user-id file leaves
// no special file, no set-id bit and no path out of the zone.
func TestExecTarHostileEntries(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"required", "off"} { // seccomp holds without Landlock
		t.Run("exec_sandbox="+mode, func(t *testing.T) { tarHostileEntries(t, mode) })
	}
}

func tarHostileEntries(t *testing.T, mode string) {
	e := start(t, map[string]string{"FILESHED_EXEC_SANDBOX": mode})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "fifo", Typeflag: tar.TypeFifo, Mode: 0o644},
		{Name: "null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3, Mode: 0o666},
		{Name: "disk", Typeflag: tar.TypeBlock, Devmajor: 8, Devminor: 0, Mode: 0o660},
		{Name: "passwd", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"},
		{Name: "up", Typeflag: tar.TypeLink, Linkname: "../../../other/Storage/data/secret.txt"},
		{Name: "etc", Typeflag: tar.TypeSymlink, Linkname: "/etc", Mode: 0o777},
		{Name: "suid", Typeflag: tar.TypeReg, Mode: 0o4755, Size: 3},
		{Name: "sgid-dir/", Typeflag: tar.TypeDir, Mode: 0o2775},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte("hi\n"))
		}
	}
	tw.Close()
	e.write(execDir+"evil.tar", buf.String())
	e.write(otherSecret, "other-user-secret\n")
	r := runExec(e, execCall{"zone": "storage", "cmd": "tar", "args": []string{"-xf", "evil.tar"}})
	wantOK(t, r)
	zoneDir := filepath.Join(e.base, execDir)
	assertNoSpecialFiles(t, zoneDir)
	for _, name := range []string{"passwd", "up"} {
		if b, err := os.ReadFile(filepath.Join(zoneDir, name)); err == nil && (strings.Contains(string(b), "root:") || strings.Contains(string(b), "secret")) {
			t.Fatalf("%s reached a file outside the zone", name)
		}
	}
	wantError(t, runExec(e, execCall{"zone": "storage", "cmd": "cat", "args": []string{"etc/passwd"}}), "PATH_ESCAPE")
	if fi, err := os.Stat(filepath.Join(zoneDir, "suid")); err != nil || fi.Size() != 3 {
		t.Fatalf("the regular entry was not extracted: %v", err)
	}
}

// TestExecUnzipKeepsNoSetID: `unzip -K` (keep set-id bits) of a 04755 entry
// extracts the file without the bit.
func TestExecUnzipKeepsNoSetID(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("unzip"); err != nil {
		t.Skip("unzip is not installed (Debian package unzip)")
	}
	for _, mode := range []string{"required", "off"} {
		t.Run("exec_sandbox="+mode, func(t *testing.T) { unzipKeepsNoSetID(t, mode) })
	}
}

func unzipKeepsNoSetID(t *testing.T, mode string) {
	e := start(t, map[string]string{"FILESHED_EXEC_SANDBOX": mode})
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: "tool", Method: zip.Store}
	h.SetMode(0o4755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("#!/bin/sh\n"))
	hd := &zip.FileHeader{Name: "shared/"}
	hd.SetMode(fs.ModeDir | fs.ModeSetgid | fs.ModeSticky | 0o777)
	if _, err := zw.CreateHeader(hd); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	e.write(execDir+"suid.zip", buf.String())
	wantOK(t, runExec(e, execCall{"zone": "storage", "cmd": "unzip", "args": []string{"-K", "-o", "suid.zip"}}))
	zoneDir := filepath.Join(e.base, execDir)
	if _, err := os.Stat(filepath.Join(zoneDir, "tool")); err != nil {
		t.Fatalf("not extracted: %v", err)
	}
	assertNoSpecialFiles(t, zoneDir)
}

// assertNoSpecialFiles walks a zone: only regular files, directories and symlinks,
// none with a set-user-id, set-group-id or sticky bit.
func assertNoSpecialFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		m := fi.Mode()
		if m&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeCharDevice|fs.ModeSocket) != 0 || m&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
			t.Errorf("%s: mode %v", strings.TrimPrefix(p, dir), m)
		}
		return nil
	})
}

// TestExecReadsNoConfigFromTheZone: dotfiles in the zone (HOME was the zone) are
// code for jq (~/.jq), yq (Python user site-packages) and sqlite3 (~/.sqliterc):
// none of them is read.
func TestExecReadsNoConfigFromTheZone(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(execDir+".jq", `def length: "PWNED";`+"\n")
	e.write(execDir+"a.yaml", "a: [1, 2]\n")
	e.write(execDir+".sqliterc", "select 'PWNED';\n")
	e.write(execDir+".inputrc", "set editing-mode vi\n")
	for _, v := range []string{"3.9", "3.10", "3.11", "3.12", "3.13", "3.14"} {
		e.write(execDir+".local/lib/python"+v+"/site-packages/evil.pth", "import sys; sys.stderr.write('PWNED\\n')\n")
	}
	cases := [][]string{{"jq", "-n", "[1,2] | length"}, {"yq", ".a | length", "a.yaml"}, {"sqlite3", "x.db", "select 1;"}}
	for _, c := range cases {
		t.Run(c[0], func(t *testing.T) {
			if _, err := exec.LookPath(c[0]); err != nil {
				t.Skipf("%s is not installed (Debian package %s)", c[0], c[0])
			}
			r := runExec(e, execCall{"zone": "storage", "cmd": c[0], "args": c[1:]})
			wantOK(t, r)
			if strings.Contains(r.raw, "PWNED") || r.Data["returncode"] != 0.0 {
				t.Fatalf("zone config was loaded: %s", r.raw)
			}
		})
	}
}

// TestExecAwkNeedsGawk: on a host with mawk only, awk says what to install.
func TestExecAwkNeedsGawk(t *testing.T) {
	mawk, err := exec.LookPath("mawk")
	if err != nil {
		t.Skip("mawk is not installed (Debian package mawk)")
	}
	bin := t.TempDir()
	for _, name := range []string{"mawk", "awk"} {
		if err := os.Symlink(mawk, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	e := start(t, nil)
	// Not runExec: it would skip for want of gawk, the very condition under test.
	r := e.post("shed_exec", execCall{"zone": "storage", "cmd": "awk", "args": []string{"BEGIN{print 1}"}}, nil)
	wantError(t, r, "COMMAND_NOT_FOUND")
	if !strings.Contains(r.Message, "awk needs gawk") || !strings.Contains(r.Hint, "package gawk") {
		t.Fatalf("%s", r.raw)
	}
}

// noLandlockEnv makes this test binary a server on a kernel without Landlock: init
// installs a seccomp filter on every thread under which landlock_create_ruleset
// fails with ENOSYS, as on a kernel built without it.
const noLandlockEnv = "FILESHED_TEST_NO_LANDLOCK"

func init() {
	if os.Getenv(noLandlockEnv) == "" {
		return
	}
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_LANDLOCK_CREATE_RULESET, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		panic(err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		panic(errno)
	}
}

// TestExecFailsClosedWithoutLandlock: with the default exec_sandbox (required), a
// server on a kernel without Landlock reports it in /readyz and refuses commands
// with SANDBOX_UNAVAILABLE and a hint naming the valve; best_effort is the explicit
// opt-in that runs them anyway. The server is this test binary in a child process
// whose kernel says "no Landlock".
func TestExecFailsClosedWithoutLandlock(t *testing.T) {
	if os.Getenv(noLandlockEnv) == "" {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(self, "-test.run=^TestExecFailsClosedWithoutLandlock$", "-test.v")
		cmd.Env = append(os.Environ(), noLandlockEnv+"=1", "FILESHED_SKIP_CATALOGUE=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestExecFailsClosedWithoutLandlock") {
			t.Fatalf("server without Landlock: %v\n%s", err, out)
		}
		seen.Store("SANDBOX_UNAVAILABLE", true) // answered by the child server
		return
	}
	e := start(t, nil)
	resp, err := http.Get(e.srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"mode":"required"`) {
		t.Fatalf("readyz %d: %s", resp.StatusCode, body)
	}
	r := runExec(e, execCall{"zone": "storage", "cmd": "echo", "args": []string{"x"}})
	wantError(t, r, "SANDBOX_UNAVAILABLE")
	if !strings.Contains(r.Hint, "exec_sandbox") {
		t.Fatalf("hint: %s", r.raw)
	}
	e = start(t, map[string]string{"FILESHED_EXEC_SANDBOX": "best_effort"})
	r = runExec(e, execCall{"zone": "storage", "cmd": "echo", "args": []string{"x"}})
	wantOK(t, r)
	if r.Data["sandboxed"] != false || r.Data["stdout"] != "x\n" {
		t.Fatalf("best_effort without Landlock: %v", r.Data)
	}
}

// TestExecAwkIncludeRefused: gawk --sandbox still reads any file named by @include
// (its lines come back in syntax errors); without Landlock nothing else stops it.
func TestExecAwkIncludeRefused(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_EXEC_SANDBOX": "off"})
	secret := e.write(otherSecret, "other-user-secret\n")
	r := runExec(e, execCall{"zone": "storage", "cmd": "awk", "args": []string{"@include \"" + secret + "\"\nBEGIN{print 1}"}})
	wantError(t, r, "ARGUMENT_FORBIDDEN")
	if strings.Contains(r.raw, "other-user-secret") {
		t.Fatalf("%s", r.raw)
	}
}
