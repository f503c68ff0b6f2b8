package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fileshed/fileshed/internal/pgtest"
	"github.com/fileshed/fileshed/internal/testtool"
)

// TestMain runs more tests at once than the cores by default, unless -parallel is given: most
// of their time is the private PostgreSQL server's (a new database per test, round trips),
// not this process's. Then it stops that server (pgtest).
func TestMain(m *testing.M) {
	testtool.ParallelAtLeast(8)
	os.Exit(pgtest.Run(m))
}

// drivers are the drivers every behaviour of the store is tested on.
var drivers = []string{SQLite, Postgres}

// onBoth runs f once per driver, as subtests named after it.
func onBoth(t *testing.T, f func(t *testing.T, drv string)) {
	t.Helper()
	for _, drv := range drivers {
		t.Run(drv, func(t *testing.T) {
			// Each driver's run opens databases of its own (a file, a new PostgreSQL
			// database): the two run side by side, and beside other tests' (issue 34);
			// every test of the package is parallel, none shares a database or a variable.
			t.Parallel()
			f(t, drv)
		})
	}
}

// testSource is a fresh, empty state database of driver drv: a file in a temporary folder,
// or a new database on the tests' private PostgreSQL server.
func testSource(t testing.TB, drv string) Source {
	t.Helper()
	if drv == Postgres {
		return Source{Driver: Postgres, URL: pgtest.URL(t)}
	}
	return Source{Driver: SQLite, Path: filepath.Join(t.TempDir(), "fileshed.sqlite")}
}

// openTest opens a fresh state database of driver drv and closes it at the end of the test.
func openTest(t testing.TB, drv string) *DB {
	t.Helper()
	d, err := OpenSource(testSource(t, drv))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}
