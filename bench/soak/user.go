package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// file is what a user knows of one of its files: the last acknowledged content, and the
// content of a write whose answer was lost to a crash (it may or may not have landed).
type file struct {
	zone, path string
	acked      *string
	pending    *string
}

// user is one simulated user: its own files (no other user writes them, so the last
// acknowledged content is known exactly) and one conversation.
type user struct {
	id     string
	srv    *server
	st     *stats
	files  []*file
	client *http.Client
	seq    int
	live   int // reads that disagreed with the last acknowledged write while serving
}

func newUser(id string, s *server, st *stats) *user {
	u := &user{id: id, srv: s, st: st, client: &http.Client{Timeout: 2 * time.Minute}}
	for i := range 2 {
		u.files = append(u.files, &file{zone: "storage", path: fmt.Sprintf("soak/s%d.txt", i)},
			&file{zone: "documents", path: fmt.Sprintf("soak/d%d.md", i)})
	}
	return u
}

// loop runs the mix until ctx ends.
func (u *user) loop(ctx context.Context) {
	for ctx.Err() == nil {
		f := u.files[mrand.IntN(len(u.files))]
		switch r := mrand.IntN(100); {
		case f.pending != nil || f.acked == nil || r < 10 || len(*f.acked) > 4096:
			u.write(f)
		case r < 35:
			u.appendLine(f)
		case r < 55:
			u.read(f)
		case r < 65:
			u.call("shed_tree", map[string]any{"zone": f.zone, "path": "soak"})
		case r < 75:
			u.call("shed_exec", map[string]any{"zone": f.zone, "cmd": "wc", "args": []string{"-c", f.path}})
		case r < 80 && f.zone == "documents":
			u.call("shed_history", map[string]any{"zone": f.zone, "path": f.path, "limit": 5})
		case f.zone == "documents":
			u.lockedEdit(f)
		default:
			u.read(f)
		}
	}
}

func (u *user) next() string {
	u.seq++
	return fmt.Sprintf("%s write %d at %s\n", u.id, u.seq, time.Now().Format(time.RFC3339Nano))
}

// settle records a write's outcome: acknowledged, refused (nothing changed), or unknown.
func settle(f *file, code string, content string) {
	switch code {
	case "OK":
		f.acked, f.pending = &content, nil
	case "CONNECTION":
		f.pending = &content
	}
}

func (u *user) write(f *file) {
	c := u.next()
	code, _ := u.call("shed_create_file", map[string]any{"zone": f.zone, "path": f.path, "content": c})
	settle(f, code, c)
}

func (u *user) appendLine(f *file) {
	line := u.next()
	code, _ := u.call("shed_patch_text", map[string]any{"zone": f.zone, "path": f.path, "content": line, "position": "end"})
	settle(f, code, *f.acked+line)
}

func (u *user) lockedEdit(f *file) {
	args := func(action string) map[string]any {
		return map[string]any{"action": action, "zone": f.zone, "path": f.path}
	}
	if code, _ := u.call("shed_lockedit", args("open")); code != "OK" {
		return
	}
	c := u.next()
	over := args("overwrite")
	over["content"] = c
	if code, _ := u.call("shed_lockedit", over); code != "OK" {
		u.call("shed_lockedit", args("cancel"))
		return
	}
	code, _ := u.call("shed_lockedit", args("save"))
	settle(f, code, c)
}

func (u *user) read(f *file) {
	code, data := u.call("shed_read", map[string]any{"zone": f.zone, "path": f.path})
	if code != "OK" || f.pending != nil || f.acked == nil {
		return
	}
	if got, _ := data["content"].(string); got != *f.acked {
		u.live++
		fmt.Fprintf(os.Stderr, "soak: %s %s/%s reads %q, last acknowledged %q\n", u.id, f.zone, f.path, got, *f.acked)
	}
}

// call posts one tool call as this user and records its latency and outcome code
// ("CONNECTION" when the server did not answer, e.g. killed mid-call).
func (u *user) call(tool string, body map[string]any) (string, map[string]any) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, "http://"+u.srv.addr+"/"+tool, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+u.srv.key)
	req.Header.Set("X-OpenWebUI-User-Id", u.id)
	req.Header.Set("X-OpenWebUI-Chat-Id", "chat-"+u.id)
	start := time.Now()
	resp, err := u.client.Do(req)
	if err != nil {
		u.st.add(tool, "CONNECTION", 0)
		time.Sleep(100 * time.Millisecond) // the server is restarting
		return "CONNECTION", nil
	}
	defer resp.Body.Close()
	var env struct {
		Success bool           `json:"success"`
		Error   string         `json:"error"`
		Data    map[string]any `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		discard(resp.Body)
		u.st.add(tool, "CONNECTION", 0) // cut mid-answer
		return "CONNECTION", nil
	}
	code := "OK"
	if !env.Success {
		code = env.Error
	}
	u.st.add(tool, code, time.Since(start))
	return code, env.Data
}

// verify compares every file on disk with what the user knows: the last acknowledged
// content, or (after a write cut by a crash) that write's content. It returns the number of
// lost or wrong files, plus the live read mismatches.
func (u *user) verify(base string) int {
	bad := u.live
	for _, f := range u.files {
		dir := map[string]string{"storage": "Storage", "documents": "Documents"}[f.zone]
		got, err := os.ReadFile(filepath.Join(base, "users", u.id, dir, "data", f.path))
		switch {
		case errors.Is(err, os.ErrNotExist) && f.acked == nil:
			continue // never acknowledged, never landed
		case err != nil:
			bad++
			fmt.Fprintf(os.Stderr, "soak: %s %s/%s: %v\n", u.id, f.zone, f.path, err)
		case f.acked != nil && string(got) == *f.acked:
		case f.pending != nil && string(got) == *f.pending:
		default:
			bad++
			fmt.Fprintf(os.Stderr, "soak: %s %s/%s holds %q; acknowledged %v, pending %v\n", u.id, f.zone, f.path, got, deref(f.acked), deref(f.pending))
		}
	}
	return bad
}

func deref(s *string) string {
	if s == nil {
		return "(none)"
	}
	return fmt.Sprintf("%q", *s)
}
