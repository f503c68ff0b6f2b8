package handlers_test

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The hostile shed_sqlite calls of issue 24 (item 2), each from its own user (so that only
// the server's total bounds apply, not the per-user ones).
var sqliteHogs = map[string]struct {
	n       int
	timeout string // exec_timeout_default
	query   string
}{
	"zeroblob8":    {1, "30", zeroblob8},
	"zeroblob8x20": {20, "30", zeroblob8},
	// Values under the cap of one value (half of sqlite_memory_mb): the call's bound stops them.
	"zeroblob8of30MB":    {1, "30", strings.ReplaceAll(zeroblob8, "60000000", "30000000")},
	"zeroblob8of30MBx20": {20, "30", strings.ReplaceAll(zeroblob8, "60000000", "30000000")},
	"cte30":              {30, "10", "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT count(*) FROM c"},
	"temploop":           {1, "10", "CREATE TEMP TABLE t AS WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT zeroblob(100000) AS b FROM c"},
}

var zeroblob8 = "SELECT " + strings.TrimSuffix(strings.Repeat("zeroblob(60000000), ", 8), ", ")

// BenchmarkSQLiteBoundsRSS reports the server's peak resident size (VmHWM of this process,
// which runs the server; reset before each case) during each hostile case, the time it
// took, what it wrote (temporary files included) and how many calls answered which code.
func BenchmarkSQLiteBoundsRSS(b *testing.B) {
	names := make([]string, 0, len(sqliteHogs))
	for n := range sqliteHogs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		hog := sqliteHogs[name]
		b.Run(name, func(b *testing.B) {
			e := start(b, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key, "FILESHED_EXEC_TIMEOUT_DEFAULT": hog.timeout})
			call := func(user string) reply {
				return e.post("shed_sqlite", map[string]any{"zone": "storage", "path": "hog.db", "query": hog.query},
					map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": user})
			}
			call("warm") // the server's steady state: connections, caches
			runtime.GC()
			debug.FreeOSMemory()
			base := procStatus(b, "self", "VmRSS")
			wrote := procIO(b, "wchar")
			resetPeak()
			begin := time.Now()
			var mu sync.Mutex
			codes := map[string]int{}
			var wg sync.WaitGroup
			for i := range hog.n {
				wg.Go(func() {
					r := call(fmt.Sprintf("u%d", i))
					code := r.Error
					if r.Success {
						code = "OK"
					}
					mu.Lock()
					codes[code]++
					mu.Unlock()
				})
			}
			wg.Wait()
			b.ReportMetric(float64(base)/1024, "base-RSS-MB")
			b.ReportMetric(float64(procStatus(b, "self", "VmHWM"))/1024, "peak-RSS-MB")
			b.ReportMetric(time.Since(begin).Seconds(), "s")
			b.ReportMetric(float64(procIO(b, "wchar")-wrote)/(1<<20), "written-MB")
			b.Logf("%s: %v", name, codes)
		})
	}
}

// procIO reads a field of /proc/self/io (wchar: bytes this process passed to write(2),
// temporary files SQLite unlinked at once included).
func procIO(b testing.TB, field string) int64 {
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Skipf("no /proc/self/io: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field+": "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatalf("no %s in /proc/self/io", field)
	return 0
}
