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
	"search":   {"commands", "files"}, // the command timeout; PDFs through the files' reader
}

// TestFamiliesImportOnlyTheKernel keeps the direction main -> handlers -> tools/<family> ->
// core -> core/<leaf>: a family, and every package nested under it, imports the kernel,
// core's leaves and its listed siblings, never the HTTP edge nor the project's test helpers;
// the kernel and its leaves never import a family.
func TestFamiliesImportOnlyTheKernel(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	families := 0
	for _, line := range lines {
		if family, nested := familyOf(strings.Fields(line)[0]); family != "" && !nested {
			families++
		}
	}
	if families < 8 {
		t.Fatalf("%d family packages under tools/, want at least 8", families)
	}
	for _, v := range importViolations(lines) {
		t.Error(v)
	}
	// Test helpers stay in the tests: no package of the module's binary imports them.
	all, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range helperImports(strings.Split(strings.TrimSpace(string(all)), "\n")) {
		t.Error(v)
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

// TestImportRulesCatchPlantedViolations: each rule of importViolations fails on a planted
// violation (issue 35: a nested package under a family importing handlers, and a family
// importing test helpers, passed the check before), and passes what is allowed.
func TestImportRulesCatchPlantedViolations(t *testing.T) {
	for _, c := range []struct {
		line string
		bad  bool
	}{
		{module + "/tools/files " + module + "/core " + module + "/core/confine " + module + "/tools/commands", false},
		{module + "/tools/files " + module + "/handlers", true},
		{module + "/tools/files/sub " + module + "/handlers", true},      // nested under a family
		{module + "/tools/files/sub/deeper net/http", true},              // nested, knows HTTP
		{module + "/tools/links " + module + "/internal/coretest", true}, // a test helper
		{module + "/tools/groups " + module + "/tools/files", true},      // not a listed sibling
		{module + "/tools/info github.com/go-chi/chi/v5", true},
		{module + "/tools " + module + "/tools/files " + module + "/tools/links", false}, // the set of families
	} {
		if got := importViolations([]string{c.line}); (len(got) > 0) != c.bad {
			t.Errorf("%q: violations %v, want bad=%v", c.line, got, c.bad)
		}
	}
	for _, c := range []struct {
		line string
		bad  bool
	}{
		{module + "/handlers " + module + "/internal/testtool", true},
		{module + "/core " + module + "/internal/coretest", true},
		{module + "/admin " + module + "/internal/golden", true},
		{module + " " + module + "/internal/testvalves", true}, // main
		{module + "/core/confine/sub " + module + "/internal/pgtest", true},
		{module + "/tools/files/sub " + module + "/internal/coretest", true},
		{module + "/internal/coretest " + module + "/internal/testvalves", false}, // a helper uses a helper
		{module + "/handlers " + module + "/core " + module + "/tools", false},
		{module + "/handlers github.com/example/internal/x", false}, // another module's
	} {
		if got := helperImports([]string{c.line}); (len(got) > 0) != c.bad {
			t.Errorf("%q: test-helper imports %v, want bad=%v", c.line, got, c.bad)
		}
	}
}

// helperImports checks go list lines of non-test imports ("package import import ...")
// against the test-helper rule: the packages under internal/ are the tests' helpers (they
// build kernels, start PostgreSQL, compare golden files), and only they import each other.
func helperImports(lines []string) []string {
	var bad []string
	helpers := module + "/internal/"
	for _, line := range lines {
		fields := strings.Fields(line)
		if strings.HasPrefix(fields[0], helpers) {
			continue
		}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, helpers) {
				bad = append(bad, fields[0]+" imports the test helper "+imp+" outside its tests")
			}
		}
	}
	return bad
}

// familyOf is the family a package belongs to ("" for none) and whether it is nested below
// the family's own package.
func familyOf(pkg string) (family string, nested bool) {
	rest, ok := strings.CutPrefix(pkg, module+"/tools/")
	if !ok {
		return "", false
	}
	family, _, nested = strings.Cut(rest, "/")
	return family, nested
}

// importViolations checks go list lines ("package import import ...") against the rules.
func importViolations(lines []string) []string {
	var bad []string
	for _, line := range lines {
		fields := strings.Fields(line)
		family, _ := familyOf(fields[0])
		if family == "" {
			continue
		}
		for _, imp := range fields[1:] {
			sib, _ := familyOf(imp)
			isFamily := sib != ""
			switch {
			case imp == "net/http" || strings.HasPrefix(imp, "github.com/danielgtaylor/huma") || strings.HasPrefix(imp, "github.com/go-chi/chi"):
				bad = append(bad, fields[0]+" knows HTTP: imports "+imp)
			case imp == module+"/core" || strings.HasPrefix(imp, module+"/core/"):
			case isFamily && (sib == family || slices.Contains(siblings[family], sib)):
			case isFamily:
				bad = append(bad, fields[0]+" imports the family "+sib+", not one of its listed siblings")
			case strings.HasPrefix(imp, module+"/") || imp == module:
				bad = append(bad, fields[0]+" imports "+imp+" (only the kernel, its leaves and siblings)")
			}
		}
	}
	return bad
}
