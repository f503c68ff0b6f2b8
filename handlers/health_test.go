package handlers_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/fileshed/fileshed/handlers"
)

// readyz reads /readyz: status and details.
func readyz(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Data map[string]any `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, env.Data
}

// /readyz checks the database and the storage directory, and turns off while draining.
func TestReadyzDatabaseStorageDraining(t *testing.T) {
	t.Parallel()
	cfg := config(t, nil)
	h, _, svc, err := handlers.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); svc.Close() })
	status, d := readyz(t, srv.URL)
	if d["database"] != "ok" || d["storage"] != "writable" || d["draining"] != nil {
		t.Fatalf("readyz %d %v", status, d)
	}
	if os.Getuid() != 0 { // root writes through any mode: the storage check cannot fail as root
		os.Chmod(cfg.StorageBasePath, 0o555)
		status, d = readyz(t, srv.URL)
		os.Chmod(cfg.StorageBasePath, 0o755)
		if status != http.StatusServiceUnavailable || d["storage"] != "not writable" {
			t.Fatalf("read-only storage: readyz %d %v", status, d)
		}
	}
	svc.BeginShutdown()
	status, d = readyz(t, srv.URL)
	if status != http.StatusServiceUnavailable || d["draining"] != true {
		t.Fatalf("draining: readyz %d %v", status, d)
	}
	if matches, _ := filepath.Glob(filepath.Join(cfg.StorageBasePath, ".readyz-*")); len(matches) > 0 {
		t.Fatalf("readyz left its probe files: %v", matches)
	}
}
