// Package loadgen sends tool calls to running fileshed servers over loopback HTTP from
// concurrent workers and measures them: the engine of bench/load and bench/replicas. Like
// them it speaks only HTTP and never imports the fileshed packages.
package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Stats is what one series of calls measured.
type Stats struct {
	Count, Errors int
	Lat           []time.Duration // sorted
	Elapsed       time.Duration
	FirstErr      string
}

// Hammer runs do for i = 0, 1, ... n-1 from workers concurrent workers (worker is the
// caller's number, 0..workers-1), and times each call; a worker takes no new i once ctx is
// done or, when until is not zero, once until has passed. A call's error counts as an
// error (the first one is kept).
func Hammer(ctx context.Context, workers, n int, until time.Time, do func(worker, i int) error) Stats {
	var next atomic.Int64
	var mu sync.Mutex
	st := Stats{Lat: make([]time.Duration, 0, min(n, 1<<20))}
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil || !until.IsZero() && time.Now().After(until) {
					return
				}
				s := time.Now()
				err := do(w, i)
				d := time.Since(s)
				mu.Lock()
				st.Count++
				st.Lat = append(st.Lat, d)
				if err != nil {
					st.Errors++
					if st.FirstErr == "" {
						st.FirstErr = err.Error()
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	st.Elapsed = time.Since(t0)
	slices.Sort(st.Lat)
	return st
}

// Pct is the p-th percentile latency (p 100 is the maximum).
func (st Stats) Pct(p int) time.Duration {
	if len(st.Lat) == 0 {
		return 0
	}
	return st.Lat[min(len(st.Lat)-1, len(st.Lat)*p/100)]
}

// Throughput is the calls per second, errors included.
func (st Stats) Throughput() float64 {
	return float64(st.Count) / max(st.Elapsed.Seconds(), 1e-9)
}

// Print writes the summary, one "name value" per line.
func (st Stats) Print(w io.Writer, tool string) {
	fmt.Fprintf(w, "tool %s\ncount %d\nerrors %d\n", tool, st.Count, st.Errors)
	for _, p := range []int{50, 90, 99} {
		fmt.Fprintf(w, "p%d %s\n", p, st.Pct(p).Round(time.Microsecond))
	}
	fmt.Fprintf(w, "max %s\n", st.Pct(100).Round(time.Microsecond))
	fmt.Fprintf(w, "elapsed %s\nthroughput %.1f req/s\n", st.Elapsed.Round(time.Millisecond), st.Throughput())
}

// Answer is a tool's answer: its envelope's success, error code and data.
type Answer struct {
	Success bool           `json:"success"`
	Error   string         `json:"error"`
	Data    map[string]any `json:"data"`
}

// Call posts body to url (a server's base URL + "/" + tool) with header. The error is a
// transport failure, a non-200 status or success:false; the answer is decoded either way.
func Call(ctx context.Context, client *http.Client, url string, body []byte, header map[string]string) (Answer, error) {
	var a Answer
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return a, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return a, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return a, err
	}
	_ = json.Unmarshal(raw, &a)
	if resp.StatusCode != http.StatusOK || !a.Success {
		return a, fmt.Errorf("status %d: %.200s", resp.StatusCode, raw)
	}
	return a, nil
}
