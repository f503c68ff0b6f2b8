package handlers_test

import (
	"os"
	"path/filepath"
	"testing"
)

// execAs is one shed_exec call from a conversation.
func execAs(e *env, conversation string, body execCall) reply {
	e.t.Helper()
	return e.post("shed_exec", body, conv(conversation))
}

// TestExecRefusesLockedOperand (issue 9 finding 5): while conversation A holds plan.md, a
// command of conversation B naming it is refused with FILE_LOCKED and the file is unchanged.
func TestExecRefusesLockedOperand(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(execDir+"plan.md", "a plan\n")
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "plan.md"}, conv("chat-a")))
	for _, args := range [][]string{{"-i", "s/plan/trap/", "plan.md"}, {"plan.md"}} {
		cmd := map[int]string{3: "sed", 1: "rm"}[len(args)]
		r := execAs(e, "chat-b", execCall{"zone": "storage", "cmd": cmd, "args": args})
		wantError(t, r, "FILE_LOCKED")
		if r.Details["path"] != "plan.md" || r.Details["locked_by_conversation"] != "chat-a" {
			t.Fatalf("%s: details %s", cmd, r.raw)
		}
	}
	// stdout_file is a write too.
	wantError(t, execAs(e, "chat-b", execCall{"zone": "storage", "cmd": "echo", "args": []string{"x"}, "stdout_file": "plan.md"}), "FILE_LOCKED")
	if got := readFile(t, e, execDir+"plan.md"); got != "a plan\n" {
		t.Fatalf("plan.md = %q", got)
	}
	// The holder itself may still run commands on it.
	wantOK(t, execAs(e, "chat-a", execCall{"zone": "storage", "cmd": "sed", "args": []string{"-i", "s/a plan/my plan/", "plan.md"}}))
	if got := readFile(t, e, execDir+"plan.md"); got != "my plan\n" {
		t.Fatalf("holder's change: %q", got)
	}
}

// TestExecRestoresLockedFileReachedIndirectly: rm -r of the folder holding a locked file,
// and rm -r ., leave the locked file as it was; the answer lists it in data.reverted. In
// Documents the deletion of the locked file is not committed either.
func TestExecRestoresLockedFileReachedIndirectly(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"storage", "documents"} {
		t.Run(zone, func(t *testing.T) {
			e := start(t, nil)
			dir := map[string]string{"storage": execDir, "documents": "users/local/Documents/data/"}[zone]
			for _, f := range []string{"docs/plan.md", "docs/other.md"} {
				content := map[string]string{"docs/plan.md": "a plan\n", "docs/other.md": "other\n"}[f]
				wantOK(t, e.post("shed_create_file", map[string]any{"zone": zone, "path": f, "content": content}, nil))
			}
			wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": zone, "path": "docs/plan.md"}, conv("chat-a")))
			r := execAs(e, "chat-b", execCall{"zone": zone, "cmd": "rm", "args": []string{"-r", "docs"}})
			wantOK(t, r)
			if rev := reverted(r); len(rev) != 1 || rev[0] != "docs/plan.md" {
				t.Fatalf("reverted: %s", r.raw)
			}
			if got := readFile(t, e, dir+"docs/plan.md"); got != "a plan\n" {
				t.Fatalf("plan.md = %q", got)
			}
			if _, err := os.Stat(filepath.Join(e.base, dir, "docs/other.md")); !os.IsNotExist(err) {
				t.Fatalf("the unlocked sibling should be gone: %v", err)
			}
			r = execAs(e, "chat-b", execCall{"zone": zone, "cmd": "rm", "args": []string{"-r", "."}})
			if !r.Success && r.Error != "ARGUMENT_FORBIDDEN" && r.Error != "PATH_ESCAPE" {
				t.Fatalf("rm -r .: %s", r.raw)
			}
			if got := readFile(t, e, dir+"docs/plan.md"); got != "a plan\n" {
				t.Fatalf("after rm -r .: plan.md = %q", got)
			}
			// A's edit still saves over an intact original.
			wantOK(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": zone, "path": "docs/plan.md", "content": "v2\n"}, conv("chat-a")))
			wantOK(t, e.post("shed_lockedit_save", map[string]any{"zone": zone, "path": "docs/plan.md"}, conv("chat-a")))
			if got := readFile(t, e, dir+"docs/plan.md"); got != "v2\n" {
				t.Fatalf("after save: %q", got)
			}
			if zone == "documents" {
				for _, h := range history(t, e, "docs/plan.md") {
					if h["message"] == "shed_exec: rm -r docs" {
						t.Fatalf("the deletion of the locked file was committed: %v", h)
					}
				}
			}
		})
	}
}

// TestExecPutsBackALockedFileReplacedByALink: a command that replaces a file another
// conversation holds locked by a symlink to its sibling, without naming it (`tar -xf l.tar`
// holding the link), gets the locked file put back as a regular file. The lock guard used to write
// its copy through the link: the locked file stayed a link and the sibling it pointed at
// was overwritten with the locked file's content.
func TestExecPutsBackALockedFileReplacedByALink(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"storage", "documents"} {
		t.Run(zone, func(t *testing.T) {
			e := start(t, nil)
			dir := map[string]string{"storage": execDir, "documents": "users/local/Documents/data/"}[zone]
			wantOK(t, e.post("shed_create_file", map[string]any{"zone": zone, "path": "docs/plan.md", "content": "a plan\n"}, nil))
			wantOK(t, e.post("shed_create_file", map[string]any{"zone": zone, "path": "docs/other.md", "content": "other\n"}, nil))
			wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": zone, "path": "docs/plan.md"}, conv("chat-a")))
			wantOK(t, e.post("shed_create_file", map[string]any{"zone": zone, "path": "l.tar", "file_type": "bytes",
				"content_format": "base64", "content": symlinkTar(t, "docs/plan.md", "other.md")}, nil))
			r := execAs(e, "chat-b", execCall{"zone": zone, "cmd": "tar", "args": []string{"-xf", "l.tar"}})
			wantOK(t, r)
			if rev := reverted(r); len(rev) != 1 || rev[0] != "docs/plan.md" {
				t.Fatalf("reverted: %s", r.raw)
			}
			if fi, err := os.Lstat(filepath.Join(e.base, dir, "docs/plan.md")); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("docs/plan.md is not a regular file again: %v, %v", fi, err)
			}
			if got := readFile(t, e, dir+"docs/plan.md"); got != "a plan\n" {
				t.Fatalf("plan.md = %q", got)
			}
			if got := readFile(t, e, dir+"docs/other.md"); got != "other\n" {
				t.Fatalf("the link's target was written through: other.md = %q", got)
			}
		})
	}
}
