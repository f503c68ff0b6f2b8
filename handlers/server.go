package handlers

import (
	"net/http"
	"time"

	"github.com/fileshed/fileshed/core/valves"
)

// Timeouts bound how long one connection may hold the server: a client sending one byte a
// second, or never reading its answer, is cut off.
type Timeouts struct {
	// ReadHeader bounds the request line and headers; Read the whole request, body
	// included; Write the time from the end of the headers to the end of the answer (so it
	// exceeds exec_timeout_max: a command may run that long); Idle a kept-alive connection
	// between requests.
	ReadHeader, Read, Write, Idle time.Duration
}

// DefaultTimeouts are the timeouts main serves with: 10 s for the headers, 2 min for a
// body (a max_file_size_mb upload at ~2.5 MB/s), exec_timeout_max + 1 min to answer,
// 2 min idle.
func DefaultTimeouts(cfg *valves.Config) Timeouts {
	return Timeouts{ReadHeader: 10 * time.Second, Read: 2 * time.Minute,
		Write: time.Duration(cfg.ExecTimeoutMax)*time.Second + time.Minute, Idle: 2 * time.Minute}
}

// NewServer is the HTTP server of h with the timeouts t (main and the tests).
func NewServer(addr string, h http.Handler, t Timeouts) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read,
		WriteTimeout: t.Write, IdleTimeout: t.Idle}
}
