package testtool

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// memRoot is where MemDir makes its directories: Linux's shared-memory file system.
var memRoot = "/dev/shm"

// MemDir is a new temporary directory on a memory file system (tmpfs at /dev/shm) when the
// machine has one, else t.TempDir; it is removed when t ends. For a test that needs a
// million directory entries and not their disk: tmpfs creates and removes an entry in about
// a quarter of ext4's kernel time (no journal, no on-disk index). What lives there is held
// in memory until the test ends.
func MemDir(t testing.TB) string {
	t.Helper()
	var fs unix.Statfs_t
	if err := unix.Statfs(memRoot, &fs); err != nil || fs.Type != unix.TMPFS_MAGIC || unix.Access(memRoot, unix.W_OK) != nil {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp(memRoot, "fileshed-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing the memory directory: %v", err)
		}
	})
	return dir
}

// LinkMany makes n hard links of the file name in dir, named by name(i) for i from 1 to n,
// with one linkat(2) each relative to the open folder (no path walked per link): for trees
// of many entries, where path lookups would cost as much as the links.
func LinkMany(t testing.TB, dir, file string, n int, name func(int) string) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for i := 1; i <= n; i++ {
		if err := unix.Linkat(fd, file, fd, name(i), 0); err != nil {
			t.Fatalf("link %s to %s in %s: %v", name(i), file, dir, err)
		}
	}
}
