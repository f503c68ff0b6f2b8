package testtool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// recorder records a skip instead of skipping (a real skip would fail CI).
type recorder struct {
	testing.TB
	skipped string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) { r.skipped = fmt.Sprintf(format, args...) }

func TestRequireNamesThePackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := &recorder{TB: t}
	Require(r, "zipinfo")
	if !strings.Contains(r.skipped, "apt-get install unzip") {
		t.Fatalf("skip message %q", r.skipped)
	}
	r = &recorder{TB: t}
	Require(r, "cat")
	if r.skipped != "" {
		t.Fatalf("a base program skipped: %q", r.skipped)
	}
}

// TestMemDirIsOnTmpfsAndRemoved: MemDir's directory is on tmpfs when /dev/shm is one, on
// the test's temporary disk when the root is not tmpfs, and gone (with what it held) when
// the test that asked for it ends.
func TestMemDirIsOnTmpfsAndRemoved(t *testing.T) {
	var dirs []string
	t.Run("shm", func(t *testing.T) {
		d := MemDir(t)
		var fs unix.Statfs_t
		if err := unix.Statfs("/dev/shm", &fs); err == nil && fs.Type == unix.TMPFS_MAGIC && !strings.HasPrefix(d, "/dev/shm/") {
			t.Fatalf("MemDir %s is not under /dev/shm", d)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		LinkMany(t, d, "f", 3, func(i int) string { return fmt.Sprintf("f%d", i) })
		if fi, err := os.Stat(filepath.Join(d, "f3")); err != nil || fi.Sys().(*syscall.Stat_t).Nlink != 4 {
			t.Fatalf("links: %v %v", fi, err)
		}
		dirs = append(dirs, d)
	})
	t.Run("disk", func(t *testing.T) {
		old := memRoot
		memRoot = t.TempDir() // not a tmpfs: the fallback
		defer func() { memRoot = old }()
		d := MemDir(t)
		if strings.HasPrefix(d, memRoot) || strings.HasPrefix(d, "/dev/shm/") {
			t.Fatalf("MemDir %s on a root that is not tmpfs", d)
		}
		dirs = append(dirs, d)
	})
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Fatalf("%s survives its test: %v", d, err)
		}
	}
}
