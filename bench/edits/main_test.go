package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
)

// full runs the whole corpus and prints the table (go test ./bench/edits -run Edits -v -full).
var full = flag.Bool("full", false, "run every corpus file and print the table")

// server runs a real fileshed (default valves, auth mode none) on loopback.
func server(t *testing.T) string {
	t.Helper()
	defaults, err := os.ReadFile("../../valves.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	cfg, _, err := valves.Load(defaults, nil, func(k string) (string, bool) {
		if k == "FILESHED_STORAGE_BASE_PATH" {
			return base, true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	h, _, svc, err := handlers.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); svc.Close() })
	return srv.URL
}

// TestEditsAgainstRealServer runs the bench on a few corpus files (every file with -full):
// every attempt runs, and with anchor and expected_hash together no edit lands wrongly
// without a word and every refusal names its fix. (An anchor alone can: its two hex digits
// collide for one line in 256, as the full table shows.)
func TestEditsAgainstRealServer(t *testing.T) {
	files := "4"
	if *full {
		files = "0"
	}
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-url", server(t), "-files", files}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	t.Log("\n" + out.String())
	for _, l := range strings.Split(out.String(), "\n") {
		cells := strings.Split(l, "|")
		if len(cells) < 7 {
			continue
		}
		mode := strings.TrimSpace(cells[1])
		if mode == "hash+anchor" {
			if n, _ := strconv.Atoi(strings.TrimSpace(cells[6])); n != 0 {
				t.Errorf("%s: %d edits applied wrongly without a word", mode, n)
			}
			if n, _ := strconv.Atoi(strings.TrimSpace(cells[4])); n != 0 {
				t.Errorf("%s: %d refusals name no fix", mode, n)
			}
		}
	}
	if !strings.Contains(out.String(), "| hash+anchor |") {
		t.Fatalf("no table: %s", out.String())
	}
}

// TestEditsRefusesRemoteServers: the bench only drives a loopback server.
func TestEditsRefusesRemoteServers(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-url", "http://example.com"}, &out, &errs); code != 2 {
		t.Fatalf("exit %d for a remote host", code)
	}
}
