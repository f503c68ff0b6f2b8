package main

import (
	"bytes"
	"context"
	"flag"
	"strconv"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/internal/testserver"
)

// full runs the whole corpus and prints the table (go test ./bench/edits -run Edits -v -full).
var full = flag.Bool("full", false, "run every corpus file and print the table")

// TestEditsAgainstRealServer runs the bench on a few corpus files (every file with -full):
// every attempt runs, and with anchor and expected_hash together no edit lands wrongly
// without a word and every refusal names its fix. (An anchor alone can: its two hex digits
// collide for one line in 256, as the full table shows.)
func TestEditsAgainstRealServer(t *testing.T) {
	files := "4"
	if *full {
		files = "0"
	}
	url, _ := testserver.Start(t, nil)
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-url", url, "-files", files}, &out, &errs); code != 0 {
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
