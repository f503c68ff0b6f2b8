package handlers_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/internal/golden"
)

// hostValues replaces the values of keys that depend on the host (installed commands,
// Landlock) with "<host>", so that a golden answer pins its keys and their order anywhere.
func hostValues(raw string, keys ...string) []byte {
	for _, k := range keys {
		re := regexp.MustCompile(`("` + regexp.QuoteMeta(k) + `":)(true|false|null|-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*"|\[[^\]]*\])`)
		raw = re.ReplaceAllString(raw, `${1}"<host>"`)
	}
	return []byte(raw)
}

// pinExec is pinAnswer for a shed_exec answer, whose sandboxed flag is the host's (and
// the program's messages, which name it as the host installed it, in the keys hosted).
func pinExec(t *testing.T, name string, r reply, hosted ...string) {
	t.Helper()
	wantOK(t, r)
	golden.JSON(t, name, hostValues(r.raw, append(hosted, "sandboxed")...))
}

// tarOf is a tar archive of the named files (a name ending in "/" is a folder).
func tarOf(t *testing.T, files ...[2]string) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f[0], Mode: 0o600, Size: int64(len(f[1])), Typeflag: tar.TypeReg}
		if strings.HasSuffix(f[0], "/") {
			h = &tar.Header{Name: f[0], Mode: 0o700, Typeflag: tar.TypeDir}
		}
		must(t, tw.WriteHeader(h))
		_, err := tw.Write([]byte(f[1]))
		must(t, err)
	}
	must(t, tw.Close())
	return buf.String()
}

// TestGoldenCommands pins one answer per shape the commands family builds: a run, a failed
// run with the shell hint, output files, merged stderr, cut output, the files put back
// (locked, protected, another member's), the timeout and over-quota refusals, an encrypted
// zone's write-back notes, and the allowed commands.
func TestGoldenCommands(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1"})
	x := func(args map[string]any, h map[string]string) reply {
		if args["zone"] == nil {
			args["zone"] = "storage"
		}
		return e.post("shed_exec", args, h)
	}
	e.write(execDir+"a.txt", "alpha\nbeta\n")
	e.write(execDir+"held.txt", "held\n")
	zeros := strings.Repeat("\x00", 400<<10)
	var tgz bytes.Buffer
	zw := gzip.NewWriter(&tgz)
	_, err := zw.Write([]byte(tarOf(t, [2]string{"z1.bin", zeros}, [2]string{"z2.bin", zeros}, [2]string{"z3.bin", zeros})))
	must(t, err)
	must(t, zw.Close())
	e.write(execDir+"z.tgz", tgz.String())
	pinExec(t, "commands_exec", x(map[string]any{"cmd": "cat", "args": []string{"a.txt"}}, nil))
	pinExec(t, "commands_exec_shell_hint", x(map[string]any{"cmd": "cat", "args": []string{"a.txt", "|", "grep", "a"}}, nil), "stderr")
	pinExec(t, "commands_exec_files", x(map[string]any{"cmd": "cat", "args": []string{"a.txt"}, "stdout_file": "out.txt", "stderr_file": "err.txt"}, nil))
	pinExec(t, "commands_exec_merged", x(map[string]any{"cmd": "cat", "args": []string{"nothing.txt"}, "redirect_stderr_to_stdout": true}, nil), "stdout")
	pinExec(t, "commands_exec_truncated", x(map[string]any{"cmd": "seq", "args": []string{"1", "5000"}, "max_output": 100}, nil))
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "held.txt"}, conv("chat-a")))
	e.write(execDir+"h.tar", tarOf(t, [2]string{"held.txt", "replaced\n"}))
	pinExec(t, "commands_exec_reverted_locked", x(map[string]any{"cmd": "tar", "args": []string{"-xf", "h.tar"}}, conv("chat-b")))
	e.write("users/local/Documents/data/p.tar", tarOf(t, [2]string{"p/.git/", ""}, [2]string{"p/.git/config", "[core]\n"}, [2]string{"p/keep.txt", "keep"}))
	pinExec(t, "commands_exec_reverted_protected", x(map[string]any{"zone": "documents", "cmd": "tar", "args": []string{"-xf", "p.tar"}}, nil))

	r := x(map[string]any{"cmd": "sleep", "args": []string{"999"}, "timeout": 1}, nil)
	wantError(t, r, "TIMEOUT")
	golden.JSON(t, "commands_exec_timeout", []byte(r.raw))
	r = x(map[string]any{"cmd": "tar", "args": []string{"-xzf", "z.tgz"}}, nil)
	wantError(t, r, "QUOTA_EXCEEDED")
	// The growth is where the watchdog stopped tar: the whole 1.17 MB on a quiet machine,
	// anywhere past the 1 MB free on a loaded one (CI saw both).
	if grown, used := r.Details["growth"].(float64), r.Details["used"].(float64); grown <= 1<<20-used || grown > 3*400<<10 {
		t.Errorf("growth %v with %v used: want past the free space, at most the archive", grown, used)
	}
	grew := regexp.MustCompile(`grew the Storage zone by [0-9.]+ MB`)
	golden.JSON(t, "commands_exec_over_quota", grew.ReplaceAll([]byte(r.raw), []byte("grew the Storage zone by <volatile> MB")), "used", "growth")

	r = e.post("shed_allowed_commands", nil, nil)
	wantOK(t, r)
	golden.JSON(t, "commands_allowed", hostValues(r.raw, "available", "missing", "coverage", "installed", "landlock_abi", "landlock", "enforced", "ready", "message"))
}

// TestGoldenCommandsGroupReverted pins the entry of a group file another member's command
// changed and the guard put back (owner and mode).
func TestGoldenCommandsGroupReverted(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.create("alice", "mine.md", "alice's\n", "owner")
	g.create("bob", "other.md", "bob's\n", "group")
	r := g.as("bob", "shed_exec", in(map[string]any{"cmd": "cp", "args": []string{"other.md", "mine.md"}}))
	wantOK(t, r)
	golden.JSON(t, "commands_exec_reverted_group", hostValues(r.raw, "sandboxed"))
}

// TestGoldenCommandsSealed pins the write-back notes of a command in an encrypted zone (a
// symlink leaving the zone is not written back).
func TestGoldenCommandsSealed(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must(t, tw.WriteHeader(&tar.Header{Name: "out/escape", Linkname: "../../../../../etc/passwd", Typeflag: tar.TypeSymlink, Mode: 0o777}))
	must(t, tw.Close())
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "a.tar", "file_type": "bytes",
		"content_format": "base64", "content": base64.StdEncoding.EncodeToString(buf.Bytes())}, nil))
	pinExec(t, "commands_exec_sealed_not_written_back", e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "tar", "args": []string{"-xf", "a.tar"}}, nil))
}
