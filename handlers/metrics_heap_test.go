package handlers_test

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestMetricsLiveHeap: /metrics reports the heap the last collection found reachable (what
// the soak bench follows to tell a leak from garbage awaiting collection): after a forced
// collection it is positive and no larger than the heap in use.
func TestMetricsLiveHeap(t *testing.T) {
	e := start(t, nil)
	runtime.GC()
	status, body := scrape(t, e, "")
	if status != http.StatusOK {
		t.Fatalf("/metrics answered %d", status)
	}
	gauge := func(name string) float64 {
		for _, line := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				return f
			}
		}
		t.Fatalf("/metrics lacks %s", name)
		return 0
	}
	live, inuse := gauge("fileshed_go_heap_live_bytes"), gauge("go_memstats_heap_inuse_bytes")
	if live <= 0 || live > inuse {
		t.Fatalf("live heap %.0f bytes, heap in use %.0f: want 0 < live <= in use", live, inuse)
	}
}
