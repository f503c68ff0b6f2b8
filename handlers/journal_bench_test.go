package handlers_test

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkJournalOverhead measures what the change journal costs (issue 36), with two
// servers side by side, one with journal.enabled false, their calls interleaved so that the
// machine's noise hits both alike: a 1 KB overwrite in Storage (the before-image kept in
// the journal area, two journal rows), a write and commit in Documents (the image is the
// commit's parent), and a command extracting a 10,000-file tar (-tarfiles) into a fresh
// folder of Storage (one row: the folder). Compare the p50 of on/ with off/.
//
//	FILESHED_SKIP_CATALOGUE=1 go test -run '^$' -bench BenchmarkJournalOverhead -benchtime 300x ./handlers/
func BenchmarkJournalOverhead(b *testing.B) {
	// The file quota leaves room for many tar rounds of -tarfiles each.
	quota := map[string]string{"FILESHED_QUOTA_FILES_PER_USER": "100000000", "FILESHED_QUOTA_PER_USER_MB": "100000"}
	off := map[string]string{"FILESHED_JOURNAL_ENABLED": "false"}
	maps.Copy(off, quota)
	servers := map[string]*env{"on": start(b, quota), "off": start(b, off)}
	chunk := strings.Repeat("x", 1023) + `\n`
	for _, zone := range []string{"storage", "documents"} {
		b.Run(zone+"_1KB_overwrite", func(b *testing.B) {
			var ops []timed
			for _, name := range journalSides() {
				post := poster(b, servers[name], "shed_create_file")
				call := func(i int) {
					post(`{"zone":"` + zone + `","path":"w/f` + fmt.Sprint(i%50) + `.txt","overwrite":true,"content":"` + fmt.Sprint(i) + chunk + `"}`)
				}
				for i := range 50 {
					call(i) // warm up: every file exists, so each call overwrites
				}
				ops = append(ops, timed{name, call})
			}
			latencies(b, ops...)
		})
	}
	b.Run("tar_xf", func(b *testing.B) {
		var ops []timed
		for _, name := range journalSides() {
			e := servers[name]
			writeTar(b, filepath.Join(e.base, storageDir, "t.tar"), *tarFiles)
			post := poster(b, e, "shed_exec")
			ops = append(ops, timed{name, func(i int) {
				post(`{"zone":"storage","cmd":"tar","args":["-xf","t.tar","-C","x` + fmt.Sprint(i) + `"]}`)
			}})
			mk := poster(b, e, "shed_exec")
			for i := range b.N {
				mk(`{"zone":"storage","cmd":"mkdir","args":["x` + fmt.Sprint(i) + `"]}`)
			}
		}
		latencies(b, ops...)
	})
}

// journalSide runs BenchmarkJournalOverhead's calls on one server only (-journalside on or
// off), so that a profile or a count of system calls (strace -c) tells one side's cost
// per call; "" runs both, interleaved.
var journalSide = flag.String("journalside", "", "on or off: run BenchmarkJournalOverhead on that server only")

// journalSides are the servers BenchmarkJournalOverhead calls (-journalside).
func journalSides() []string {
	if *journalSide != "" {
		return []string{*journalSide}
	}
	return []string{"on", "off"}
}

// tarFiles is the number of files of BenchmarkJournalOverhead's tar (-tarfiles).
var tarFiles = flag.Int("tarfiles", 10000, "files in BenchmarkJournalOverhead's tar")

// writeTar writes a tar of n small files (100 per folder) at p.
func writeTar(b *testing.B, p string, n int) {
	b.Helper()
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for i := range n {
		body := []byte(fmt.Sprintf("file %d\n", i))
		if err := w.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%d/f%d.txt", i/100, i), Mode: 0o600, Size: int64(len(body))}); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Write(body); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
}
