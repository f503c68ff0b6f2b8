package admin_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fileshed/fileshed/admin"
	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
)

// crashArg makes the test binary an import that kills itself (SIGKILL, as kill -9) right
// after the swap step named by its first argument: crashArg STEP BASE ARGS...
const crashArg = "__import-crash"

// crashingImport is the test binary run with crashArg.
func crashingImport(args []string) int {
	step, base := args[0], args[1]
	admin.SetSwapStep(func(s string) {
		if s == step {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	})
	defaults, err := os.ReadFile("../valves.yaml")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	cfg, _, err := valves.Load(defaults, []string{"--storage-base-path", base}, func(string) (string, bool) { return "", false })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return admin.Run(cfg, args[2:], os.Stdout, os.Stderr)
}

// killedImport runs import-original args on base in a process that is killed right after
// the swap step, and checks it was.
func killedImport(t *testing.T, base, step string, args ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{crashArg, step, base}, args...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the import was not killed at %q: %v\n%s", step, err, out)
	}
}

// storageHash hashes what the swap replaces: the zones and the state database.
func storageHash(t *testing.T, base string) string {
	t.Helper()
	var b strings.Builder
	for _, name := range []string{"users", "groups", "fileshed.sqlite"} {
		p := filepath.Join(base, name)
		if _, err := os.Lstat(p); err != nil {
			fmt.Fprintf(&b, "%s missing;", name)
			continue
		}
		fmt.Fprintf(&b, "%s %s;", name, treeHash(t, p))
	}
	return b.String()
}

// TestImportForceKilledMidSwap (issue 33): `--force` used to delete the old zones before
// moving the new ones in; a kill -9 in that window left one user gone and part of
// another's files, and the server started on it silently. Now a kill after any rename of
// the swap leaves a storage that serve refuses with the two ways out, and each works:
// --rollback gives back the old storage byte for byte, --finish the whole import.
func TestImportForceKilledMidSwap(t *testing.T) {
	t.Parallel()
	old := original{t: t, dir: filepath.Join(t.TempDir(), "old")}
	old.write("users/"+alice+"/Storage/data/old.txt", "old\n")
	old.write("users/"+bob+"/Storage/data/b.txt", "bob's\n")
	old.ownershipDB(nil)
	o := original{t: t, dir: filepath.Join(t.TempDir(), "new")}
	o.write("users/"+alice+"/Storage/data/new.txt", "new\n")
	o.write("groups/"+team+"/data/g.md", "g\n")
	o.ownershipDB([][4]string{{team, "g.md", alice, "owner"}})

	for _, tc := range []struct{ step, end string }{
		{"aside users", "--rollback"}, // alice's and bob's old zones moved aside, the new not in yet
		{"aside users", "--finish"},
		{"in groups", "--rollback"},
		{"aside fileshed.sqlite", "--finish"},
	} {
		t.Run(tc.step+" "+tc.end, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "storage")
			if code, out, errOut := run(t, base, "import-original", old.dir); code != 0 {
				t.Fatalf("first import: %s %s", out, errOut)
			}
			before := storageHash(t, base)
			killedImport(t, base, tc.step, "import-original", o.dir, "--force")

			_, _, svc, err := handlers.Build(config(t, base), slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err == nil {
				svc.Close()
				t.Fatal("the server started on a half-replaced storage")
			}
			if !errors.Is(err, core.ErrImportInterrupted) || !strings.Contains(err.Error(), "import-original --finish") ||
				!strings.Contains(err.Error(), "import-original --rollback") {
				t.Fatalf("the refusal does not name the ways out: %v", err)
			}
			for _, cmd := range [][]string{{"quota", "show"}, {"restore", t.TempDir(), "--force"}, {"migrate"}} {
				if code, _, errOut := run(t, base, cmd...); code != 1 || !strings.Contains(errOut, "interrupted") {
					t.Fatalf("%v ran on a half-replaced storage: %d %s", cmd, code, errOut)
				}
			}
			if code, _, errOut := run(t, base, "import-original", o.dir, "--force"); code != 1 || !strings.Contains(errOut, "--rollback") {
				t.Fatalf("a new import over an interrupted one: %d %s", code, errOut)
			}
			code, out, errOut := run(t, base, "import-original", tc.end)
			if code != 0 {
				t.Fatalf("%s: %s %s", tc.end, out, errOut)
			}
			if _, err := os.Lstat(filepath.Join(base, ".import-original")); err == nil {
				t.Errorf("%s left the staging directory", tc.end)
			}
			after := storageHash(t, base) // before a server adds its own folders
			s := serveHeaders(t, config(t, base))
			if tc.end == "--rollback" {
				if after != before {
					t.Fatalf("the rollback did not give the old storage back:\n%s\n%s", before, after)
				}
				s.ok(t, bob, "", "shed_read", map[string]any{"zone": "storage", "path": "b.txt"})
				return
			}
			if _, err := os.Stat(filepath.Join(base, "users", bob)); err == nil {
				t.Error("the finished import kept a user the original does not have")
			}
			s.ok(t, alice, "", "shed_read", map[string]any{"zone": "storage", "path": "new.txt"})
			s.refused(t, alice, "shed_read", map[string]any{"zone": "storage", "path": "old.txt"}, "FILE_NOT_FOUND")
			if d := s.ok(t, alice, "", "shed_read", map[string]any{"zone": "group", "group": team, "path": "g.md"}); d["content"] != "g\n" {
				t.Errorf("the group file: %v", d)
			}
		})
	}
	base := filepath.Join(t.TempDir(), "storage")
	if code, _, errOut := run(t, base, "import-original", "--finish"); code != 1 || !strings.Contains(errOut, "does not exist") && !strings.Contains(errOut, "no such file") {
		t.Errorf("--finish on a missing storage: %d %s", code, errOut)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, base, "import-original", "--rollback"); code != 1 || !strings.Contains(errOut, "no interrupted import") {
		t.Errorf("--rollback with nothing to roll back: %d %s", code, errOut)
	}
}

// TestImportOriginalHelp: `fileshed admin import-original --help` shows every flag.
func TestImportOriginalHelp(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, t.TempDir(), "import-original", "--help")
	if code != 0 {
		t.Fatalf("--help: %d %s %s", code, out, errOut)
	}
	for _, flag := range []string{"--force", "--finish", "--rollback", "--no-ownership", "--allow-damaged-history"} {
		if !strings.Contains(out, flag) {
			t.Errorf("--help lacks %s:\n%s", flag, out)
		}
	}
}
