package handlers_test

import (
	"os"
	"path/filepath"
	"testing"
)

// groupEnv is a server whose group "team" has the members alice, bob and carol
// (groups.static, headers mode), and "ops" only dave.
type groupEnv struct {
	*env
	t *testing.T
}

func startGroups(t *testing.T, vars map[string]string) *groupEnv {
	t.Helper()
	all := map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key,
		"FILESHED_GROUPS_STATIC": `{"team":["alice","bob","carol"],"ops":["dave"]}`}
	for k, v := range vars {
		all[k] = v
	}
	return &groupEnv{env: start(t, all), t: t}
}

// as calls tool as user (conversation "c-"+user) with args.
func (g *groupEnv) as(user, tool string, args map[string]any) reply {
	g.t.Helper()
	return g.post(tool, args, map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": user,
		"X-OpenWebUI-Chat-Id": "c-" + user})
}

// in adds zone=group, group=team to args.
func in(args map[string]any) map[string]any {
	args["zone"], args["group"] = "group", "team"
	return args
}

// create makes path in team as user with mode.
func (g *groupEnv) create(user, path, content, mode string) {
	g.t.Helper()
	wantOK(g.t, g.as(user, "shed_create_file", in(map[string]any{"path": path, "content": content, "mode": mode})))
}

// file reads a team file from disk ("" and false when missing).
func (g *groupEnv) file(rel string) (string, bool) {
	g.t.Helper()
	b, err := os.ReadFile(filepath.Join(g.base, "groups", "team", "data", filepath.FromSlash(rel)))
	return string(b), err == nil
}

// wantFile fails unless the team file rel holds content, as a regular file.
func (g *groupEnv) wantFile(rel, content string) {
	g.t.Helper()
	p := filepath.Join(g.base, "groups", "team", "data", filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		g.t.Fatalf("%s: not a regular file (%v)", rel, err)
	}
	if got, _ := g.file(rel); got != content {
		g.t.Fatalf("%s = %q, want %q", rel, got, content)
	}
}
