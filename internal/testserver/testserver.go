// Package testserver runs a real fileshed for the benchmarks' tests: the server main builds
// (handlers.Build), the project's valves.yaml with a storage directory of the test, behind
// httptest on loopback.
package testserver

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/fileshed/fileshed/handlers"
	"github.com/fileshed/fileshed/internal/testvalves"
)

// Start runs a server (default valves, auth mode none, vars overriding them) on a new
// storage directory until the test ends; it returns the server's URL and the directory.
func Start(t testing.TB, vars map[string]string) (url, base string) {
	t.Helper()
	base = t.TempDir()
	h, _, svc, err := handlers.Build(testvalves.Config(t, base, vars), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); svc.Close() })
	return srv.URL, base
}
