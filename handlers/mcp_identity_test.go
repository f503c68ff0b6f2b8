package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

// notJSONRPC is a body the MCP layer would refuse with a plain 400: an answer with the
// authentication envelope proves that the identity middleware ran before any JSON-RPC was read.
const notJSONRPC = `{"this is": not json-rpc`

// TestMCPIdentityInEveryAuthMode: the same identity as the HTTP routes, in all four modes.
// The right credentials reach the caller's own zone (and the chat id of
// X-OpenWebUI-Chat-Id); wrong ones are refused with the envelope before any JSON-RPC.
func TestMCPIdentityInEveryAuthMode(t *testing.T) {
	const secret = "jwt-secret-for-mcp"
	fake := owuitest.New(t)
	fake.AddUser("tok-alice", owui.User{ID: "alice-1", Email: "a@x", Name: "Alice", Role: "user"})
	fake.AddUser("tok-pending", owui.User{ID: "pat-9", Name: "Pat", Role: "pending"})
	jwt := signJWT(t, "HS256", secret, map[string]any{"sub": "carol-3", "name": "Carol", "role": "user",
		"iss": "open-webui", "exp": time.Now().Add(time.Hour).Unix()})
	type refusal struct {
		headers map[string]string
		status  int
		code    string
	}
	modes := []struct {
		name    string
		valves  map[string]string
		good    map[string]string
		user    string
		refused []refusal
	}{
		{"none", nil, map[string]string{}, "local", nil},
		{"headers", map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key},
			map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "bob-2"}, "bob-2",
			[]refusal{
				{map[string]string{"X-OpenWebUI-User-Id": "bob-2"}, 401, "AUTH_REQUIRED"},
				{map[string]string{"Authorization": "Bearer wrong-key", "X-OpenWebUI-User-Id": "bob-2"}, 401, "AUTH_INVALID"},
				{map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "../x"}, 403, "INVALID_USER"},
			}},
		{"jwt", map[string]string{"FILESHED_AUTH_MODE": "jwt", "FILESHED_AUTH_API_KEY": key, "FILESHED_AUTH_JWT_SECRET": secret},
			map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Jwt": jwt}, "carol-3",
			[]refusal{
				{map[string]string{"Authorization": "Bearer wrong-key", "X-OpenWebUI-User-Jwt": jwt}, 401, "AUTH_INVALID"},
				{map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Jwt": signJWT(t, "HS256", "other", map[string]any{"sub": "carol-3"})}, 401, "AUTH_INVALID"},
			}},
		{"session", map[string]string{"FILESHED_AUTH_MODE": "session", "FILESHED_OPENWEBUI_URL": fake.URL, "FILESHED_OPENWEBUI_TIMEOUT_SECONDS": "1"},
			map[string]string{"Authorization": "Bearer tok-alice"}, "alice-1",
			[]refusal{
				{map[string]string{}, 401, "AUTH_REQUIRED"},
				{map[string]string{"Authorization": "Bearer wrong-token"}, 401, "AUTH_INVALID"},
				{map[string]string{"Authorization": "Bearer tok-pending"}, 401, "AUTH_INVALID"},
			}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			e := start(t, with(mcpOn, m.valves))
			for _, r := range m.refused {
				status, header, body := e.mcpPost(strings.NewReader(notJSONRPC), r.headers)
				e.wantEnvelope(status, header, body, r.status, r.code)
			}
			good := with(m.good, map[string]string{"X-OpenWebUI-Chat-Id": "chat-mcp-1"})
			cs := e.mcpConnect(good)
			if r, isErr := e.mcpCall(cs, "shed_lockedit", map[string]any{"action": "open", "zone": "storage", "path": "doc.txt"}); isErr {
				// The file does not exist yet: create it, then lock it in this chat.
				if r.Error != "FILE_NOT_FOUND" {
					t.Fatalf("lockedit open: %s", r.raw)
				}
				e.mcpCall(cs, "shed_create_file", map[string]any{"zone": "storage", "path": "doc.txt", "content": m.name})
				if r, isErr = e.mcpCall(cs, "shed_lockedit", map[string]any{"action": "open", "zone": "storage", "path": "doc.txt"}); isErr {
					t.Fatalf("lockedit open: %s", r.raw)
				}
			}
			if got := readFile(t, e, "users/"+m.user+"/Storage/data/doc.txt"); got != m.name {
				t.Fatalf("the file is not in %s's zone: %q", m.user, got)
			}
			// The lock belongs to chat-mcp-1: the same user in another chat (over HTTP) is refused.
			other := with(m.good, map[string]string{"X-OpenWebUI-Chat-Id": "chat-http-2"})
			wantError(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "doc.txt"}, other), "FILE_LOCKED")
			// ... and the chat that opened it over MCP can close it over HTTP.
			wantOK(t, e.post("shed_lockedit_cancel", map[string]any{"zone": "storage", "path": "doc.txt"}, good))
		})
	}
}

// TestMCPSessionModeOpenWebUIDown: when Open WebUI cannot verify the token, /mcp answers
// 503 AUTH_UNAVAILABLE like the tools, before reading JSON-RPC.
func TestMCPSessionModeOpenWebUIDown(t *testing.T) {
	fake := owuitest.New(t)
	fake.AddUser("tok-alice", owui.User{ID: "alice-1", Name: "Alice", Role: "user"})
	e := start(t, with(mcpOn, map[string]string{"FILESHED_AUTH_MODE": "session", "FILESHED_OPENWEBUI_URL": fake.URL,
		"FILESHED_OPENWEBUI_TIMEOUT_SECONDS": "1"}))
	fake.SetDown(true)
	status, header, body := e.mcpPost(strings.NewReader(notJSONRPC), map[string]string{"Authorization": "Bearer tok-alice"})
	e.wantEnvelope(status, header, body, http.StatusServiceUnavailable, "AUTH_UNAVAILABLE")
}

// TestMCPUsersAreIsolated: two users on one MCP endpoint each see their own workspace only.
func TestMCPUsersAreIsolated(t *testing.T) {
	e := start(t, with(mcpOn, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key}))
	alice := e.mcpConnect(map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "alice-1"})
	bob := e.mcpConnect(map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "bob-2"})
	if r, isErr := e.mcpCall(alice, "shed_create_file", map[string]any{"zone": "storage", "path": "secret.txt", "content": "alice only"}); isErr {
		t.Fatalf("create: %s", r.raw)
	}
	if r, isErr := e.mcpCall(bob, "shed_read", map[string]any{"zone": "storage", "path": "secret.txt"}); !isErr || r.Error != "FILE_NOT_FOUND" {
		t.Fatalf("bob reads alice's file: %s", r.raw)
	}
	if r, _ := e.mcpCall(bob, "shed_tree", map[string]any{"zone": "storage"}); strings.Contains(r.raw, "secret.txt") {
		t.Fatalf("bob sees alice's file: %s", r.raw)
	}
	if r, isErr := e.mcpCall(alice, "shed_read", map[string]any{"zone": "storage", "path": "secret.txt"}); isErr || !strings.Contains(r.raw, "alice only") {
		t.Fatalf("alice reads her file: %s", r.raw)
	}
}
