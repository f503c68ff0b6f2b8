package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"
)

// planted is a family's file with one violation of each rule per marked line ("// want"),
// and the allowed neighbours of each (unmarked).
const planted = `package planted

import (
	"os"
	"path/filepath"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store" // want import
	"github.com/fileshed/fileshed/core/vcs" // want import
	"github.com/spf13/afero"
	"golang.org/x/sys/unix"
)

const stateFile = "fileshed.sqlite"

var _ store.Owner
var _ = vcs.HistoryDir

func f(fs *confine.Fs, a afero.Fs, z *core.Zone, r *os.Root, af afero.File, base, id string, flag int) {
	_ = os.WriteFile("x", nil, 0o600) // want write
	_ = fs.Remove("x") // want write
	_, _ = z.Fs().Open("x")
	_, _ = a.OpenFile("x", os.O_RDWR|os.O_CREATE, 0) // want write
	_, _ = a.OpenFile("x", os.O_RDONLY, 0)
	_, _ = fs.OpenFile("x", flag, 0) // want write
	_, _ = os.Open("x")
	_, _ = os.ReadFile("x")
	rm := fs.RemoveAll // want write
	_ = rm("x")
	_ = r.Mkdir("d", 0o700) // want write
	_, _ = confine.New(base) // want write
	_ = af.Truncate(0) // want write
	_ = unix.Unlinkat(0, "x", 0) // want write
	_, _ = unix.Openat(0, "x", unix.O_RDONLY, 0)
	_, _ = fs.Stat("x")
	_ = fs.SymlinkIfPossible("a", "b") // want write
	_ = filepath.Join(base, "users", id) // want layout
	_ = filepath.Join(base, stateFile) // want layout
	_ = filepath.Join(base, ".import-original/swapping") // want layout
	_ = filepath.Join(base, id, "notes.txt")
	_ = core.LayoutOf(base).User(id)
}
`

// plantedWrites is a family's file writing through the read-only faces of file systems the
// kernel hands out (a zone's, a mirror's): each marked line must not compile.
const plantedWrites = `package planted

import (
	"os"

	"github.com/fileshed/fileshed/core"
)

func f(z *core.Zone, m *core.Mirror) {
	fs := z.Fs()
	_ = fs.Remove("x") // want compile
	_ = z.Fs().Rename("a", "b") // want compile
	_, _ = fs.OpenFile("x", os.O_RDWR, 0) // want compile
	_, _ = fs.Create("x") // want compile
	_ = fs.MkdirAll("d", 0o700) // want compile
	_, _ = fs.WriteAtomic("x", nil, 0o600) // want compile
	_ = fs.SymlinkIfPossible("a", "b") // want compile
	_ = fs.Chmod("x", 0o600) // want compile
	_ = z.fs.Remove("x") // want compile
	_ = fs.f.Remove("x") // want compile
	_ = m.ReadFs().RemoveAll("x") // want compile
	_, _ = fs.Open("x")
	_, _, _ = fs.LstatIfPossible("x")
	_, _ = fs.OpenNoBlock("x", false)
	_, _ = fs.Afero().Stat("x")
	_, _ = m.ReadFs().Stat("x")
}
`

// TestFamiliesCannotWriteThroughZoneFs: the file system a family reaches through a zone
// (Zone.Fs) a mirror's (Mirror.ReadFs) has no write method and hides the writable one, so
// each planted write is a compile error, and the reads next to them compile.
func TestFamiliesCannotWriteThroughZoneFs(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted_writes.go", plantedWrites, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	conf := types.Config{Importer: exportImporter(t), Error: func(err error) {
		if te, ok := err.(types.Error); ok {
			if line := fset.Position(te.Pos).Line; !slices.Contains(got, line) {
				got = append(got, line)
			}
			t.Logf("%v", err)
		}
	}}
	_, _ = conf.Check(module+"/tools/planted", fset, []*ast.File{f}, nil)
	var want []int
	for i, line := range strings.Split(plantedWrites, "\n") {
		if strings.HasSuffix(line, "// want compile") {
			want = append(want, i+1)
		}
	}
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("compile errors on lines %v, planted writes on %v", got, want)
	}
}

// plantedMechanisms is a family's file reaching for the kernel's own mechanisms: each
// marked line uses a denied name, the unmarked ones the ways the kernel offers instead.
const plantedMechanisms = `package planted

import (
	"context"

	"github.com/fileshed/fileshed/core"
)

func f(ctx context.Context, k core.Kernel, s *core.Service, c core.Caller, z *core.Zone, tx *core.Tx) { // want deny
	_, _ = s.Mutate(ctx, c, z, "t", "m", nil) // want deny
	_ = s.RecordGroupFiles(ctx, c, z, "", "a") // want deny
	_, _ = s.HoldOwner(ctx, z.Owner, 0) // want deny
	_, _, _ = k.EditLocks(z).Of(ctx, "a")
	_ = tx.Fs(z).MakeDir("d")
	_, _ = k.Begin(ctx, c, core.Edit{Quota: &core.Quota{Size: -1}})
	_, _ = k.CheckRepo(ctx, c, z)
}
`

// TestDenyRuleCatchesPlantedMechanisms: the deny rule finds exactly the planted uses of
// the kernel's own mechanisms.
func TestDenyRuleCatchesPlantedMechanisms(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted_mechanisms.go", plantedMechanisms, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	info := check(t, fset, exportImporter(t), module+"/tools/planted", []*ast.File{f})
	var got, want []int
	for _, u := range kernelUses(info) {
		if line := fset.Position(u.pos).Line; denied(u.name) && !slices.Contains(got, line) {
			got = append(got, line)
		}
	}
	for i, line := range strings.Split(plantedMechanisms, "\n") {
		if strings.HasSuffix(line, "// want deny") {
			want = append(want, i+1)
		}
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("denied names found on lines %v, planted on %v", got, want)
	}
}

// TestRulesCatchPlantedViolations: each rule of the rules tests finds exactly the planted
// violations of its kind, and none of the allowed neighbours.
func TestRulesCatchPlantedViolations(t *testing.T) {
	t.Parallel() // type-checks its own planted file
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted.go", planted, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	info := check(t, fset, exportImporter(t), module+"/tools/planted/nested", []*ast.File{f})
	want := map[string][]int{}
	for i, line := range strings.Split(planted, "\n") {
		if _, kind, ok := strings.Cut(line, "// want "); ok {
			want[kind] = append(want[kind], i+1)
		}
	}
	lines := func(fs []found) []int {
		var out []int
		for _, x := range fs {
			out = append(out, fset.Position(x.pos).Line)
		}
		return out
	}
	var imports []found
	for _, spec := range f.Imports {
		for _, imp := range leafImports(module+"/tools/planted/nested", &ast.File{Imports: []*ast.ImportSpec{spec}}) {
			imports = append(imports, found{spec.Pos(), imp})
		}
	}
	for kind, got := range map[string][]int{"write": lines(writeCalls(info, f)), "import": lines(imports),
		"layout": lines(layoutJoins(info, f))} {
		if !slices.Equal(got, want[kind]) {
			t.Errorf("%s rule: found on lines %v, planted on %v", kind, got, want[kind])
		}
	}
	if got := leafImports(module+"/handlers", f); got != nil {
		t.Errorf("the import rule is for families only: %v", got)
	}
}
