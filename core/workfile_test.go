package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkFileStaysInItsStart: a work file is made 0600 in a private folder of this start's
// folder of the working folder, a name that climbs ("../../x") stays in it, and Remove
// takes the folder away (twice is harmless).
func TestWorkFileStaysInItsStart(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	s, _ := testService(t, map[string]string{"FILESHED_ENCRYPTION_WORK_DIR": work})
	f, err := s.NewWorkFile("../../export.csv")
	must(t, err)
	if _, err := f.WriteString("a,b\r\n"); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(s.startDir(), f.Name())
	if err != nil || strings.HasPrefix(rel, "..") || filepath.Base(f.Name()) != "export.csv" {
		t.Fatalf("work file %s is not in this start's folder %s", f.Name(), s.startDir())
	}
	fi, err := os.Stat(f.Name())
	must(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	dir := filepath.Dir(f.Name())
	f.Remove()
	f.Remove()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the work file's folder is still there: %v", err)
	}
}
