package handlers_test

import (
	"os/exec"
	"strings"
	"testing"
)

// BenchmarkReadPDF compares, on the same 40-page PDF (about 1,500 characters a page), the
// baseline of running pdftotext directly (no sandbox, no HTTP) with shed_read over HTTP
// (pdfinfo then pdftotext, both through the launcher with Landlock and rlimits), for the
// first pages that fit the output cap and for pages 10-12; "small-launcher" runs the
// commands through cmd/fileshed-sandbox (as the image does) rather than the test binary.
func BenchmarkReadPDF(b *testing.B) {
	needPoppler(b)
	for _, name := range []string{"self-launcher", "small-launcher"} {
		b.Run(name, func(b *testing.B) {
			if name == "small-launcher" {
				buildLauncher(b)
			}
			benchReadPDF(b)
		})
	}
}

func benchReadPDF(b *testing.B) {
	e := start(b, nil)
	disk := e.write(zoneDir+"b.pdf", string(textPDF(40, strings.Repeat("lorem ipsum dolor sit amet ", 55))))
	direct := func(from, to string) func(int) {
		return func(int) {
			out, err := exec.Command("pdftotext", "-layout", "-enc", "UTF-8", "-f", from, "-l", to, disk, "-").Output()
			if err != nil || len(out) == 0 {
				b.Fatal(err)
			}
		}
	}
	post := poster(b, e, "shed_read")
	latencies(b,
		timed{"direct-pages1-32", direct("1", "32")},
		timed{"shed_read-default", func(int) { post(`{"zone":"storage","path":"b.pdf"}`) }},
		timed{"direct-pages10-12", direct("10", "12")},
		timed{"shed_read-pages10-12", func(int) { post(`{"zone":"storage","path":"b.pdf","pages":"10-12"}`) }},
	)
}
