package handlers_test

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkStateDrivers is issue 25's single-write target: the p50 of one Storage write
// and of one Documents write + commit (a 1 KB shed_patch_text append, position end,
// rotating over 100 files) with state.driver postgres against sqlite. Three servers run in
// the same process: sqlite, postgres (its default synchronous_commit=off: a commit does not
// wait for its WAL on disk, SQLite's synchronous=NORMAL durability), and postgres with
// synchronous_commit=on in its state.url. Every iteration calls each of them once, so the
// machine's load hits all alike; it reports each p50/p99 and storage-ratio and
// documents-ratio (postgres p50 / sqlite p50; target ≤ 1.5), and the same with -sync for
// the third server. The
// PostgreSQL is the tests' private server; FILESHED_PGTEST_DURABLE=1 gives it a production
// server's durability (bench/drivers/drivers.sh sets it). Run:
//
//	FILESHED_PGTEST_DURABLE=1 go test -run '^$' -bench BenchmarkStateDrivers -benchtime 300x ./handlers/
func BenchmarkStateDrivers(b *testing.B) {
	lite := start(b, map[string]string{"FILESHED_STATE_DRIVER": "sqlite"})
	pg := start(b, withPostgres(b))
	durable := withPostgres(b)
	durable["FILESHED_STATE_URL"] += "&synchronous_commit=on" // pgx sends unknown URL parameters as session settings
	pgSync := start(b, durable)
	chunk := strings.Repeat("x", 1023) + `\n`
	appender := func(e *env, zone string) func(i int) {
		post := poster(b, e, "shed_patch_text")
		return func(i int) {
			post(`{"zone":"` + zone + `","path":"logs/log` + fmt.Sprint(i%100) + `.txt","content":"` + chunk + `"}`)
		}
	}
	var ops []timed
	for _, zone := range []string{"storage", "documents"} {
		ops = append(ops, timed{zone + "-sqlite", appender(lite, zone)}, timed{zone + "-postgres", appender(pg, zone)},
			timed{zone + "-postgres-sync", appender(pgSync, zone)})
	}
	for i := range 100 {
		for _, op := range ops {
			op.call(i) // warm up: connections, zone sweeps, the first commit, the 100 files
		}
	}
	p50 := latencies(b, ops...)
	b.ReportMetric(float64(p50[1])/float64(p50[0]), "storage-ratio")
	b.ReportMetric(float64(p50[2])/float64(p50[0]), "storage-ratio-sync")
	b.ReportMetric(float64(p50[4])/float64(p50[3]), "documents-ratio")
	b.ReportMetric(float64(p50[5])/float64(p50[3]), "documents-ratio-sync")
}
