package handlers_test

import (
	"strings"
	"testing"
)

// TestExecMessagesForNewcomers: the mistakes a model makes first get an answer that says
// what to do instead (issue 16 item 8).
func TestExecMessagesForNewcomers(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(execDir+"a.txt", "x\n")
	cases := []struct {
		name string
		call execCall
		code string
		hint []string
	}{
		{"arguments inside cmd", execCall{"zone": "storage", "cmd": "ls -la /tmp"}, "COMMAND_FORBIDDEN", []string{"args", "no shell", "cmd='ls'"}},
		{"a pipeline inside cmd", execCall{"zone": "storage", "cmd": "cat a.txt | wc -l"}, "COMMAND_FORBIDDEN", []string{"args", "no shell"}},
		{"rm in uploads", execCall{"zone": "uploads", "cmd": "rm", "args": []string{"a.txt"}}, "COMMAND_FORBIDDEN", []string{"read-only", "shed_delete"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runExec(e, tc.call)
			if r.Success || (tc.code != "" && r.Error != tc.code) {
				t.Fatalf("want %s, got %s", tc.code, r.raw)
			}
			text := r.Message + " " + r.Hint
			for _, want := range tc.hint {
				if !strings.Contains(text, want) {
					t.Fatalf("answer lacks %q: %s", want, r.raw)
				}
			}
		})
	}
	// Shell operators in args reach the program as text (cut -d '|' is legitimate): a failed
	// run says so.
	for _, op := range []string{"|", ">"} {
		r := runExec(e, execCall{"zone": "storage", "cmd": "cat", "args": []string{"a.txt", op, "wc"}})
		wantOK(t, r)
		if h, _ := r.Data["hint"].(string); r.Data["ok"] != false || !strings.Contains(h, "no shell") || !strings.Contains(h, "stdout_file") {
			t.Fatalf("%q in args: %s", op, r.raw)
		}
	}
	r := runExec(e, execCall{"zone": "storage", "cmd": "cut", "args": []string{"-d", "|", "-f", "1", "a.txt"}})
	if wantOK(t, r); r.Data["ok"] != true || r.Data["hint"] != nil {
		t.Fatalf("cut -d '|': %s", r.raw)
	}
	r = runExec(e, execCall{"zone": "storage", "cmd": "cat", "args": []string{"a.txt"}, "stdout_file": "out/count.txt"})
	wantOK(t, r)
	if s, _ := r.Data["stdout"].(string); !strings.Contains(s, "out/count.txt") {
		t.Fatalf("stdout_file answer must name the folder: %s", r.raw)
	}
}

// TestAwkWithoutGawk: on a host with mawk only (here: no awk at all on PATH), awk answers
// that it needs gawk and names the package, instead of "not found on system".
func TestAwkWithoutGawk(t *testing.T) {
	e := start(t, nil)
	e.write(execDir+"a.txt", "x\n")
	t.Setenv("PATH", t.TempDir())
	r := e.post("shed_exec", execCall{"zone": "storage", "cmd": "awk", "args": []string{"{print}", "a.txt"}}, nil)
	wantError(t, r, "COMMAND_NOT_FOUND")
	if !strings.Contains(r.Message, "gawk") || !strings.Contains(r.Hint, "gawk") || r.Details["package"] != "gawk" {
		t.Fatalf("%s", r.raw)
	}
}
