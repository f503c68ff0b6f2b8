package handlers_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/handlers"
)

// sendAllThenRead is a client like Open WebUI's aiohttp: it writes the whole request body
// (ignoring write errors, as a client that does not watch for an early answer) and only then
// reads the answer. It returns the status and body it read, or the error that stopped it.
func sendAllThenRead(t *testing.T, addr, head string, body []byte, chunked bool) (int, string, error) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		return 0, "", err
	}
	var werr error
	for off := 0; off < len(body) && werr == nil; off += 32 << 10 {
		part := body[off:min(off+32<<10, len(body))]
		if chunked {
			_, werr = fmt.Fprintf(conn, "%x\r\n%s\r\n", len(part), part)
		} else {
			_, werr = conn.Write(part)
		}
	}
	if chunked && werr == nil {
		_, werr = io.WriteString(conn, "0\r\n\r\n")
	}
	if werr != nil {
		return 0, "", fmt.Errorf("writing the body: %w", werr)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, "", fmt.Errorf("reading the answer: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestBodyTooLargeReachesEveryClient: a body over the limit is answered BODY_TOO_LARGE, and
// a client that keeps sending its body before reading reads that answer (no TCP reset):
// refused on Content-Length before reading, drained (a bounded amount) otherwise.
func TestBodyTooLargeReachesEveryClient(t *testing.T) {
	e := start(t, nil)
	addr := strings.TrimPrefix(e.srv.URL, "http://")
	body := []byte(`{"zone":"storage","path":"` + strings.Repeat("a", 24<<20) + `"}`)
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			head := "POST /shed_tree HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
			if chunked {
				head += "Transfer-Encoding: chunked\r\n\r\n"
			} else {
				head += fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))
			}
			for i := range 3 { // repeated: a reset is a race, not a certainty
				status, raw, err := sendAllThenRead(t, addr, head, body, chunked)
				if err != nil {
					t.Fatalf("attempt %d: %v", i, err)
				}
				var env struct {
					Error   string         `json:"error"`
					Hint    string         `json:"hint"`
					Details map[string]any `json:"details"`
				}
				if err := json.Unmarshal([]byte(raw), &env); err != nil || status != http.StatusRequestEntityTooLarge ||
					env.Error != "BODY_TOO_LARGE" || env.Hint == "" || env.Details["limit_bytes"] == nil {
					t.Fatalf("attempt %d: %d %s", i, status, raw)
				}
				seen.Store(env.Error, true)
			}
		})
	}
	// A body under the limit still works, and so does the connection after a refusal.
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, nil))
}

// TestSlowBodyIsCutOff: a client sending its body one byte at a time does not hold the
// request forever; a long command after a normal body is not cut by that deadline.
func TestSlowBodyIsCutOff(t *testing.T) {
	if !alone(t) { // sets a package variable
		return
	}
	defer handlers.SetBodyReadBase(time.Second)()
	e := start(t, nil)
	addr := strings.TrimPrefix(e.srv.URL, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"zone":"storage"}`
	fmt.Fprintf(conn, "POST /shed_tree HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	start := time.Now()
	answered := make(chan string, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- "error: " + err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		answered <- fmt.Sprintf("%d %s after %v", resp.StatusCode, b, time.Since(start))
	}()
	for i := 0; i < len(body); i++ {
		select {
		case got := <-answered:
			if time.Since(start) > 5*time.Second || !strings.Contains(got, "did not arrive in time") {
				t.Fatalf("after %v: %s", time.Since(start), got)
			}
			// A normal call with a command longer than the body deadline still completes.
			e.write(execDir+"a.txt", "x\n")
			r := runExec(e, execCall{"zone": "storage", "cmd": "sleep", "args": []string{"2"}})
			if wantOK(t, r); r.Data["returncode"] != 0.0 {
				t.Fatalf("sleep 2 after a 1 s body deadline: %s", r.raw)
			}
			return
		case <-time.After(500 * time.Millisecond):
		}
		if _, err := conn.Write([]byte{body[i]}); err != nil {
			break
		}
	}
	select {
	case got := <-answered:
		t.Logf("answer: %s", got)
		if !strings.Contains(got, "did not arrive in time") {
			t.Fatalf("slow body: %s", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a body sent one byte every 500 ms held the request for 10 s")
	}
}
