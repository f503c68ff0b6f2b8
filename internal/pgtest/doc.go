// Package pgtest gives tests a fresh PostgreSQL database on a private server: the test binary
// starts its own server on first use (initdb -A trust --no-sync into a temporary folder, a
// unix socket in that folder, no TCP listener) and stops it when its tests end. It never
// uses a system PostgreSQL. Running as root, initdb and the server run as the postgres user
// (PostgreSQL refuses root). When PostgreSQL is not installed, the tests that need it skip,
// naming the Debian package; CI installs it and fails on any skip.
//
// A package whose tests use it runs them through Run, which stops the server at the end:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
//
// and each test takes a new, empty database (dropped when the test ends) by its URL, which
// fileshed's state.url accepts as is:
//
//	url := pgtest.URL(t) // postgres://postgres@/test_3?host=/tmp/fileshed-pgtest-…&port=…
//
// The server never waits for the disk (fsync off) unless FILESHED_PGTEST_DURABLE=1 (Durable):
// then it runs with PostgreSQL's durable defaults, for the benchmarks that compare drivers.
//
// It is test support only: no production package may import it.
package pgtest
