package main

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The rules of STYLE that matter, as tests over the source (issue 35 item 5): no file-system
// write outside the kernel, no family import of the kernel's own leaves (store, lock, vcs),
// and one layout. Each reads the type-checked syntax of every non-test file outside core/
// (internal/ holds test helpers only, which deps tests keep out of the binary), and each is
// shown failing on a planted violation below. Today's violations are listed: a new one
// fails, and so does a listed one that is gone (the list only shrinks: remove its line).

const module = "github.com/fileshed/fileshed"

// writesOutsideCore are today's file-system writes outside core/, per file: calls that the
// kernel's transaction should make instead (issue 35 item 1); admin/'s are the import's
// staging storage, built before any server serves it.
var writesOutsideCore = map[string]int{
	"admin/import_copy.go":      3,
	"admin/import_git.go":       3,
	"admin/import_install.go":   12,
	"admin/import_names.go":     1,
	"admin/import_original.go":  3,
	"admin/import_ownership.go": 3,
	"admin/import_zones.go":     2,
}

// familyKernelLeaves are today's family files importing core/store, core/lock or core/vcs
// ("file import"): the kernel's own mechanisms, which a family should reach through the
// kernel's narrow handle.
var familyKernelLeaves = map[string]bool{
	"tools/groups/chown.go core/store":          true,
	"tools/groups/groups_tools.go core/store":   true,
	"tools/info/info.go core/store":             true,
	"tools/info/maintenance.go core/store":      true,
	"tools/links/links.go core/store":           true,
	"tools/links/links_open.go core/store":      true,
	"tools/links/links_owui.go core/store":      true,
	"tools/links/links_state.go core/store":     true,
	"tools/lockedit/groups_locks.go core/store": true,
	"tools/versions/restore.go core/vcs":        true,
}

// TestNoFileSystemWriteOutsideCore: outside core/, no call writes a file system (os, the
// x/sys and syscall file calls, afero's and confine's write methods, os.Root's, opening a
// file for writing, confine.New which creates its folder) beyond the listed ones.
func TestNoFileSystemWriteOutsideCore(t *testing.T) {
	t.Parallel() // reads the shared, type-checked module only
	got := map[string]int{}
	for _, f := range moduleFiles(t) {
		for _, w := range writeCalls(f.info, f.file) {
			got[f.rel]++
			t.Logf("%s: %s", f.fset.Position(w.pos), w.name)
		}
	}
	compareCounts(t, "file-system writes", got, writesOutsideCore)
}

// TestFamiliesDoNotImportKernelLeaves: a family (tools/<family>/..., nested packages too)
// imports neither core/store, core/lock nor core/vcs beyond the listed files.
func TestFamiliesDoNotImportKernelLeaves(t *testing.T) {
	t.Parallel() // reads the shared, type-checked module only
	got := map[string]int{}
	for _, f := range moduleFiles(t) {
		for _, imp := range leafImports(f.pkg, f.file) {
			got[f.rel+" "+imp]++
		}
	}
	want := map[string]int{}
	for k := range familyKernelLeaves {
		want[k] = 1
	}
	compareCounts(t, "family imports of kernel leaves", got, want)
}

// TestOneLayout: outside core/layout.go, no path join names a folder or a file of the
// storage tree (core.Layout answers them), in core too.
func TestOneLayout(t *testing.T) {
	t.Parallel() // reads the shared, type-checked module only
	for _, f := range moduleFiles(t, "core") {
		if f.rel == "core/layout.go" {
			continue
		}
		for _, j := range layoutJoins(f.info, f.file) {
			t.Errorf("%s: %s joins a storage path by hand: ask core.Layout", f.fset.Position(j.pos), j.name)
		}
	}
}

// compareCounts fails on a count above the list (a new violation) and on one below it (a
// violation gone: shrink the list).
func compareCounts(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	for _, k := range slices.Sorted(mapsKeys(got, want)) {
		switch g, w := got[k], want[k]; {
		case g > w:
			t.Errorf("%s: %d %s, %d listed: a new violation (see the log for where)", k, g, what, w)
		case g < w:
			t.Errorf("%s: %d %s, %d listed: fewer than listed, lower the list", k, g, what, w)
		}
	}
}

func mapsKeys(ms ...map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// found is one violation: where, and what was called or imported.
type found struct {
	pos  token.Pos
	name string
}

// checkedFile is one type-checked non-test file of the module.
type checkedFile struct {
	rel, pkg string
	fset     *token.FileSet
	file     *ast.File
	info     *types.Info
}

// moduleFiles is the type-checked non-test files of every package of the module outside
// core/ (plus the kernel's own package when also names "core"), internal/ (test helpers) and
// bench/ (measuring programs, never in the server).
func moduleFiles(t *testing.T, also ...string) []checkedFile {
	t.Helper()
	all, err := loadModule()
	if err != nil {
		t.Fatal(err)
	}
	var files []checkedFile
	for _, f := range all {
		if f.pkg != module+"/core" || slices.Contains(also, "core") {
			files = append(files, f)
		}
	}
	if len(files) < 100 {
		t.Fatalf("only %d files checked: the package listing is wrong", len(files))
	}
	return files
}

// loadModule type-checks the files moduleFiles answers, the kernel's package included, once
// for every rules test (each listed and checked the module on its own: about a second of
// CPU each, issue 34). The answer is read, never changed.
var loadModule = sync.OnceValues(func() ([]checkedFile, error) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}", "./...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	imp, err := newExportImporter()
	if err != nil {
		return nil, err
	}
	var files []checkedFile
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "\t")
		pkg, dir := parts[0], parts[1]
		rel, _ := filepath.Rel(root, dir)
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if top == "internal" || top == "bench" || top == "core" && pkg != module+"/core" || len(parts) < 3 || parts[2] == "" {
			continue
		}
		fset := token.NewFileSet()
		var asts []*ast.File
		var names []string
		for _, name := range strings.Fields(parts[2]) {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			asts, names = append(asts, f), append(names, filepath.ToSlash(filepath.Join(rel, name)))
		}
		info, err := typeCheck(fset, imp, pkg, asts)
		if err != nil {
			return nil, err
		}
		for i, f := range asts {
			files = append(files, checkedFile{rel: names[i], pkg: pkg, fset: fset, file: f, info: info})
		}
	}
	return files, nil
})

// exportImporter imports every dependency from the compiler's export data (go list
// -export), so that each package is type-checked from its own source only.
func exportImporter(t *testing.T) types.Importer {
	t.Helper()
	imp, err := newExportImporter()
	if err != nil {
		t.Fatal(err)
	}
	return imp
}

// newExportImporter is exportImporter's importer, over the export data listed once.
func newExportImporter() (types.Importer, error) {
	exports, err := exportData()
	if err != nil {
		return nil, err
	}
	return importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	}), nil
}

// exportData maps each dependency of the module to its export data file (go list -deps
// -export, run once: the compiler's files do not change during the tests).
var exportData = sync.OnceValues(func() (map[string]string, error) {
	out, err := exec.Command("go", "list", "-deps", "-export", "-f", "{{.ImportPath}}\t{{.Export}}", "./...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, e, ok := strings.Cut(line, "\t"); ok && e != "" {
			exports[p] = e
		}
	}
	return exports, nil
})

// check type-checks one package's files.
func check(t *testing.T, fset *token.FileSet, imp types.Importer, pkg string, files []*ast.File) *types.Info {
	t.Helper()
	info, err := typeCheck(fset, imp, pkg, files)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// typeCheck is check's work, its failure as an error.
func typeCheck(fset *token.FileSet, imp types.Importer, pkg string, files []*ast.File) (*types.Info, error) {
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{},
		Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp}
	if _, err := conf.Check(pkg, fset, files, info); err != nil {
		return nil, fmt.Errorf("type-checking %s: %w", pkg, err)
	}
	return info, nil
}
