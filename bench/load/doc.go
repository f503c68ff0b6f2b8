// Command load hits a RUNNING fileshed over loopback HTTP with one tool call, repeatedly,
// and prints the count, the errors (non-200 or success:false), the latency percentiles
// (p50/p90/p99/max) and the throughput. With -files N it first seeds N small files through
// shed_create_file (for issue 3's "100 vs 100,000 files" ratio). It refuses any host that
// is not loopback: it is a benchmark, not a load generator for someone else's server.
//
//	go run ./bench/load -tool shed_tree -body '{"zone":"storage"}' -n 2000 -c 4
//
// Where it sits: a standalone tool under bench/; it speaks only HTTP and must never import
// the fileshed packages (its test does, to run a real server in-process); its engine is
// bench/internal/loadgen, shared with bench/replicas.
package main
