package tools_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/fileshed/fileshed"

// siblings are the families each family may import (STYLE: "a family imports the kernel,
// leaves and the few siblings it names"); every other family imports none.
var siblings = map[string][]string{
	"files":    {"commands"}, // PDF reading runs poppler under the command limits
	"lockedit": {"commands"}, // shed_lockedit exec runs a command in the working copy
	"pages":    {"files", "links"},
}

// TestFamiliesImportOnlyTheKernel keeps the direction main -> handlers -> tools/<family> ->
// core -> core/<leaf>: a family imports the kernel, core's leaves and its listed siblings,
// never the HTTP edge; the kernel and its leaves never import a family.
func TestFamiliesImportOnlyTheKernel(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	families := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		family, ok := strings.CutPrefix(pkg, module+"/tools/")
		if !ok || strings.Contains(family, "/") {
			continue
		}
		families++
		for _, imp := range imports {
			switch {
			case imp == "net/http" || strings.HasPrefix(imp, "github.com/danielgtaylor/huma") || strings.HasPrefix(imp, "github.com/go-chi/chi"):
				t.Errorf("%s knows HTTP: imports %s", family, imp)
			case imp == module+"/core" || strings.HasPrefix(imp, module+"/core/"):
			case strings.HasPrefix(imp, module+"/tools/"):
				sib := strings.TrimPrefix(imp, module+"/tools/")
				if !slices.Contains(siblings[family], sib) {
					t.Errorf("%s imports the family %s, not one of its listed siblings %v", family, sib, siblings[family])
				}
			case strings.HasPrefix(imp, module+"/"):
				t.Errorf("%s imports %s (only the kernel, its leaves and siblings)", family, imp)
			}
		}
	}
	if families < 8 {
		t.Fatalf("%d family packages under tools/, want at least 8", families)
	}
	// The kernel and its leaves never import a family (go list -deps: not even indirectly).
	kernel, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+"/core/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(kernel)) {
		if strings.HasPrefix(dep, module+"/tools") {
			t.Errorf("the kernel depends on %s", dep)
		}
	}
}
