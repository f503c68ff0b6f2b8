// Command edits measures how edits land (issue 37): over a corpus of real text files
// (testdata: Markdown guides, Go sources, CSV and TSV, CRLF files, tab-indented code) it
// plays deterministic attempts of a model replacing one line it read, in the situations an
// edit meets (nothing changed; lines inserted above by another conversation; a line changed
// below; the target line itself changed; whitespace drift in a pattern; the same text on an
// earlier line), once per way of addressing the line: line=N, pattern (a regex of the line as
// the model remembers it), anchor="N:hh", and anchor with expected_hash. Each attempt ends as
// applied as meant, refused with the fix named (the refusal's details point at the place:
// candidates, nearest, line_now, current_hash), refused without it, applied wrongly with a
// warning, or applied wrongly without a word. It prints the tables recorded in BENCHMARKS.md.
//
//	go run ./bench/edits -url http://127.0.0.1:8000
//
// against a running fileshed (auth mode none, loopback only). Where it sits: a standalone
// tool under bench/; it speaks only HTTP and never imports the fileshed packages (its test
// does, to run a real server in-process).
package main
