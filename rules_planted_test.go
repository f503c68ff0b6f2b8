package main

import (
	"go/ast"
	"go/parser"
	"go/token"
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
	_ = z.Fs.Rename("a", "b") // want write
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
