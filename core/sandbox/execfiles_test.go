package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// elfInterpOf is the PT_INTERP of /usr/bin/cat on this machine, as parsed fresh.
func elfInterpOf(t *testing.T, p string) []string {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Skip(err)
	}
	elfCache.Delete(p)
	return interpreters(p, fi, "")
}

// TestExecutablesFollowInterpreters: the execute rules are the program, its ELF
// interpreter, a "#!" interpreter and what env runs, looked up in the command's
// PATH; relative names never become rules.
func TestExecutablesFollowInterpreters(t *testing.T) {
	ld := elfInterpOf(t, "/usr/bin/cat")
	if len(ld) != 1 {
		t.Skipf("/usr/bin/cat has no ELF interpreter: %v", ld)
	}
	d := t.TempDir()
	bin := filepath.Join(d, "bin")
	write(t, filepath.Join(bin, "tool"), "#!/bin/sh\n")
	os.Chmod(filepath.Join(bin, "tool"), 0o755)
	write(t, filepath.Join(d, "env-script"), "#!/usr/bin/env -S tool --x\n")
	write(t, filepath.Join(d, "relative-script"), "#!./evil\n")
	write(t, filepath.Join(d, "evil"), "#!/bin/sh\n")
	cases := []struct {
		name    string
		progs   []string
		path    string
		want    []string
		mustNot []string
	}{
		{"elf", []string{"/usr/bin/cat"}, "", []string{"/usr/bin/cat", ld[0]}, nil},
		{"env resolves in the command PATH", []string{filepath.Join(d, "env-script")}, bin,
			[]string{"/usr/bin/env", filepath.Join(bin, "tool"), "/bin/sh"}, nil},
		{"env ignores the server PATH", []string{filepath.Join(d, "env-script")}, "/nonexistent",
			[]string{"/usr/bin/env"}, []string{filepath.Join(bin, "tool")}},
		{"relative PATH entries are skipped", []string{filepath.Join(d, "env-script")}, "bin",
			[]string{"/usr/bin/env"}, []string{"bin/tool"}},
		{"relative shebang is not a rule", []string{filepath.Join(d, "relative-script")}, bin,
			[]string{filepath.Join(d, "relative-script")}, []string{"./evil", filepath.Join(d, "evil")}},
		{"relative program is not a rule", []string{"evil"}, "", nil, []string{"evil"}},
		{"missing program", []string{filepath.Join(d, "nope")}, "", nil, []string{filepath.Join(d, "nope")}},
	}
	old, _ := os.Getwd()
	if err := os.Chdir(d); err != nil { // "evil" and "./evil" exist relative to here
		t.Fatal(err)
	}
	defer os.Chdir(old)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := executables(c.progs, c.path)
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("missing %s in %v", w, got)
				}
			}
			for _, w := range c.mustNot {
				if slices.Contains(got, w) {
					t.Errorf("%s in %v", w, got)
				}
			}
		})
	}
}

// TestInterpreterCacheSeesReplacedProgram: a program replaced after its ELF header
// was cached is parsed again, so a stale interpreter is never granted in its place.
func TestInterpreterCacheSeesReplacedProgram(t *testing.T) {
	t.Parallel()
	ld := elfInterpOf(t, "/usr/bin/cat")
	if len(ld) != 1 {
		t.Skipf("/usr/bin/cat has no ELF interpreter: %v", ld)
	}
	b, err := os.ReadFile("/usr/bin/cat")
	if err != nil {
		t.Skip(err)
	}
	p := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := executables([]string{p}, ""); !slices.Equal(got, []string{p, ld[0]}) {
		t.Fatalf("elf: %v", got)
	}
	if _, ok := elfCache.Load(p); !ok {
		t.Fatal("ELF interpreter not cached")
	}
	tmp := p + ".new"
	write(t, tmp, "#!/nonexistent/interp\n") // not a rule: it does not exist
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if got := executables([]string{p}, ""); !slices.Equal(got, []string{p}) {
		t.Errorf("after replace: %v", got)
	}
}
