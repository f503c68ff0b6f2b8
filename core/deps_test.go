package core_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyDirection keeps core free of HTTP frameworks and of the packages above it
// (STYLE: main -> handlers -> core -> core/<leaf>), and leaves free of core.
func TestDependencyDirection(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/danielgtaylor/huma", "github.com/go-chi/chi",
			"github.com/fileshed/fileshed/handlers", "github.com/fileshed/fileshed/openapi"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("core depends on %s", dep)
			}
		}
	}
	// Outbound HTTP lives in core/owui only: core itself never imports net/http.
	direct, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range strings.Fields(string(direct)) {
		if imp == "net/http" {
			t.Error("core imports net/http")
		}
	}
	leaves, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, leaf := range strings.Fields(string(leaves)) {
		if leaf == "github.com/fileshed/fileshed/core" {
			continue
		}
		deps, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", leaf).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, dep := range strings.Fields(string(deps)) {
			if dep == "github.com/fileshed/fileshed/core" {
				t.Errorf("leaf %s imports core", leaf)
			}
		}
	}
}
