package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocCommentsNameTheirExport (issue 35 item 6): a doc comment begins with the name it
// documents. When a name is exported or renamed its comment must follow: "// reserve takes
// ..." above Reserve is a comment written for a name that no longer exists (go doc and every
// reader look for "Reserve"). A function's or a type's comment begins with its name (or
// "A"/"An"/"The" and its name); a constant's or a variable's, which may open a section of
// its block, is refused only when it spells the name otherwise.
func TestDocCommentsNameTheirExport(t *testing.T) {
	planted := "package p\n\n// reserve takes a slot.\nfunc Reserve() {}\n\n// Keep keeps.\nfunc Keep() {}\n\n" +
		"// holdOld holds.\nfunc Hold() {}\n\n// A Box boxes.\ntype Box int\n\n// Codes of a section.\nconst (\n\tC = 1\n\t// d is d.\n\tD = 2\n)\n"
	if got := staleDocs(t, "planted.go", planted); len(got) != 3 || !strings.Contains(got[0], "Reserve") ||
		!strings.Contains(got[1], "Hold") || !strings.Contains(got[2], " D ") {
		t.Fatalf("the planted stale comment is not caught: %v", got)
	}
	var stale []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "." || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go"):
			return nil
		}
		stale = append(stale, staleDocs(t, p, nil)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stale {
		t.Error(s)
	}
}

// staleDocs are the exported names of the file p (src: its content, nil to read it) whose
// doc comment begins with the name spelled otherwise.
func staleDocs(t *testing.T, p string, src any) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	check := func(name *ast.Ident, doc *ast.CommentGroup, strict bool) {
		if doc == nil || !name.IsExported() {
			return
		}
		words := strings.Fields(doc.Text())
		if len(words) == 0 {
			return
		}
		w := strings.TrimRight(words[0], ",.:;")
		named := w == name.Name || len(words) > 1 && (w == "A" || w == "An" || w == "The") &&
			strings.EqualFold(strings.TrimRight(words[1], ",.:;"), name.Name)
		if !named && (strict || strings.EqualFold(w, name.Name)) {
			out = append(out, fset.Position(name.Pos()).String()+": the doc comment of "+name.Name+" begins with "+w)
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			check(d.Name, d.Doc, true)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					check(s.Name, cmpDoc(s.Doc, d), true)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						check(n, cmpDoc(s.Doc, d), false)
					}
				}
			}
		}
	}
	return out
}

// cmpDoc is a spec's own doc comment, or its declaration's when the declaration has no other
// spec.
func cmpDoc(doc *ast.CommentGroup, d *ast.GenDecl) *ast.CommentGroup {
	if doc == nil && len(d.Specs) == 1 {
		return d.Doc
	}
	return doc
}
