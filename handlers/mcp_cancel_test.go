package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestMCPClientGoneCancelsTheCall: a client that hangs up during a long call (a command)
// cancels it, as on HTTP: the command is killed and its slot freed at once, whatever
// protocol version the client speaks (older versions run calls on a context of the SDK's own).
func TestMCPClientGoneCancelsTheCall(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			e := start(t, mcpOn)
			ctx, cancel := context.WithCancel(context.Background())
			call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"shed_exec","arguments":{"zone":"storage","cmd":"sleep","args":["30"],"timeout":60}}}`
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/mcp", strings.NewReader(call))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", version)
			done := make(chan error, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			running := func() bool {
				_, body := scrape(t, e, "")
				return strings.Contains(body, "fileshed_commands_running 1")
			}
			for deadline := time.Now().Add(10 * time.Second); !running(); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the command never started")
				}
			}
			cancel()
			<-done
			start := time.Now()
			for running() {
				if time.Since(start) > 5*time.Second {
					t.Fatal("the client hung up, the command still runs")
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
