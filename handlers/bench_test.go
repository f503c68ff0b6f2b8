package handlers_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkTreeEmptyZone measures the round trip of shed_tree on an empty zone over
// loopback HTTP (real server, real SQLite, real confinement), and reports the median.
func BenchmarkTreeEmptyZone(b *testing.B) {
	e := start(b, nil)
	client := &http.Client{}
	body := `{"zone":"storage"}`
	call := func() {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/shed_tree", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	call() // warm the connection and the zone
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		call()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
