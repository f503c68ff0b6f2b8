package handlers_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// timed is one operation of a latency benchmark: its metrics are named "<name>-p50-µs"
// and "<name>-p99-µs" ("p50-µs", "p99-µs" when name is "").
type timed struct {
	name string
	call func(i int)
}

// latency times each of b.N calls of call (i is the iteration), reports the median and
// the 99th percentile in microseconds, and returns the median. Warm up before calling it.
func latency(b *testing.B, call func(i int)) time.Duration {
	return latencies(b, timed{"", call})[0]
}

// latencies runs every op once per iteration, interleaved so that machine noise hits
// them alike (the ratios between them stay meaningful on a busy machine), reports each
// op's p50 and p99 in microseconds and returns the p50s in the order of ops.
func latencies(b *testing.B, ops ...timed) []time.Duration {
	b.Helper()
	lat := make([][]time.Duration, len(ops))
	for k := range lat {
		lat[k] = make([]time.Duration, 0, b.N)
	}
	b.ResetTimer()
	for i := range b.N {
		for k, op := range ops {
			t0 := time.Now()
			op.call(i)
			lat[k] = append(lat[k], time.Since(t0))
		}
	}
	b.StopTimer()
	p50s := make([]time.Duration, len(ops))
	for k, op := range ops {
		prefix := ""
		if op.name != "" {
			prefix = op.name + "-"
		}
		slices.Sort(lat[k])
		p50s[k] = lat[k][len(lat[k])/2]
		b.ReportMetric(float64(p50s[k].Microseconds()), prefix+"p50-µs")
		b.ReportMetric(float64(lat[k][len(lat[k])*99/100].Microseconds()), prefix+"p99-µs")
	}
	return p50s
}

// poster posts JSON bodies to one tool over a kept-alive connection and fails the
// benchmark on anything but HTTP 200 with success true; headers are added to each request.
func poster(b *testing.B, e *env, tool string, headers ...map[string]string) func(body string) {
	client := &http.Client{}
	return func(body string) {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/"+tool, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for _, h := range headers {
			for k, v := range h {
				req.Header.Set(k, v)
			}
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), `"success":true`) {
			b.Fatalf("%s: status %d: %s", tool, resp.StatusCode, raw)
		}
	}
}

// BenchmarkTreeEmptyZone measures the round trip of shed_tree on an empty zone over
// loopback HTTP (real server, real SQLite, real confinement), and reports the median.
func BenchmarkTreeEmptyZone(b *testing.B) {
	e := start(b, nil)
	post := poster(b, e, "shed_tree")
	call := func(int) { post(`{"zone":"storage"}`) }
	call(0) // warm the connection and the zone
	latency(b, call)
}
