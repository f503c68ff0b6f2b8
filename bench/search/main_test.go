package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/sandbox"
	"github.com/fileshed/fileshed/internal/testserver"
	"github.com/fileshed/fileshed/internal/testtool"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.LauncherArg { // the test binary is the PDF reader's launcher, as main is
		os.Exit(sandbox.LauncherMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// TestBenchRunsOnASmallCorpus: the benchmark runs against a real server (in-process, the
// handlers main builds) on a small corpus, both queries and the PDF comparison, and rg and
// shed_search agree on every count (the lead measures the real corpus on a quiet machine).
func TestBenchRunsOnASmallCorpus(t *testing.T) {
	testtool.Require(t, "rg")
	testtool.Require(t, "pdftotext")
	url, base := testserver.Start(t, nil)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-url", url, "-base", base, "-files", "300", "-mb", "3", "-rounds", "2", "-pdfs", "12"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	for _, w := range []string{"corpus: 300 files, 3 MB", "literal round 2:", "literal: 60 lines; median rg", "regex: 60 lines; median rg",
		"12 PDFs: first search", "pdf: 2 lines; median texts"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
	if code := run(context.Background(), []string{"-files", "3"}, io.Discard, io.Discard); code != 2 {
		t.Fatalf("without -bin or -url: exit %d", code)
	}
}
