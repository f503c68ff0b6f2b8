package handlers_test

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fileshed/fileshed/handlers"
)

// TestDefaultTimeoutsOutlastCommands: every timeout is set, and the answer of the longest
// command allowed (exec_timeout_max) fits in the write timeout.
func TestDefaultTimeoutsOutlastCommands(t *testing.T) {
	cfg := config(t, nil)
	d := handlers.DefaultTimeouts(cfg)
	if d.ReadHeader <= 0 || d.Read <= 0 || d.Idle <= 0 || d.Write <= time.Duration(cfg.ExecTimeoutMax)*time.Second {
		t.Fatalf("timeouts %+v with exec_timeout_max %d s", d, cfg.ExecTimeoutMax)
	}
	srv := handlers.NewServer(":0", nil, d)
	if srv.ReadHeaderTimeout != d.ReadHeader || srv.ReadTimeout != d.Read || srv.WriteTimeout != d.Write || srv.IdleTimeout != d.Idle {
		t.Fatalf("server %+v", srv)
	}
}

// TestSlowClientIsCutOff (issue 9): over a raw connection to the server main builds (with
// shorter timeouts), a client dribbling its headers or its body one byte at a time, or
// idling after an answer, is disconnected when the timeout passes.
func TestSlowClientIsCutOff(t *testing.T) {
	if !alone(t) { // sets a package variable
		return
	}
	defer handlers.SetBodyReadBase(500 * time.Millisecond)() // the body deadline of limitBodies, which replaces Read for bodies
	cfg := config(t, nil)
	h, _, svc, err := handlers.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	srv := handlers.NewServer("", h, handlers.Timeouts{ReadHeader: 400 * time.Millisecond, Read: time.Second, Write: 5 * time.Second, Idle: 500 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	body := `{"zone":"storage"}`
	cases := []struct {
		name, head, dribble string
		within              time.Duration
	}{
		{"headers one byte at a time", "POST /shed_tree HTTP/1.1\r\n", "Host: localhost\r\nX-Slow: " + strings.Repeat("a", 100), 2 * time.Second},
		{"body one byte at a time", "POST /shed_tree HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", body + strings.Repeat(" ", 82), 3 * time.Second},
		{"idle after an answer", "POST /shed_tree HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 18\r\n\r\n" + body, "", 2 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			t0 := time.Now()
			if _, err := conn.Write([]byte(tc.head)); err != nil {
				t.Fatal(err)
			}
			go func() {
				for i := range len(tc.dribble) {
					time.Sleep(100 * time.Millisecond)
					if _, err := conn.Write([]byte{tc.dribble[i]}); err != nil {
						return
					}
				}
			}()
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			got, err := io.ReadAll(conn) // until the server closes the connection
			// A reset is the server's close too: a byte the dribble wrote after it makes the
			// server's kernel answer with one (CI: the read then ended in ECONNRESET).
			if took := time.Since(t0); err != nil && !errors.Is(err, syscall.ECONNRESET) || took > tc.within {
				t.Fatalf("connection held %v (err %v), want closed within %v; read %q", took, err, tc.within, got)
			}
		})
	}
}
