package handlers_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/internal/pgtest"
	"github.com/fileshed/fileshed/internal/testtool"
)

// crashKey is the API key of the binaries of the command-crash tests (headers mode).
const crashKey = "k-crash-0123456789abcdef0123456789"

// crashEnv runs the binary in headers mode with the group team of alice, bob and carol.
var crashEnv = []string{"FILESHED_AUTH_MODE=headers", "FILESHED_AUTH_API_KEY=" + crashKey,
	`FILESHED_GROUPS_STATIC={"team":["alice","bob","carol"]}`}

// callAs calls tool on the binary as user (conversation "c-"+user) in the group team.
func (s *server) callAs(t *testing.T, user, tool string, args map[string]any) (map[string]any, error) {
	args["zone"], args["group"] = "group", "team"
	body, err := json.Marshal(args)
	must(t, err)
	req, err := http.NewRequest(http.MethodPost, s.url+"/"+tool, bytes.NewReader(body))
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+crashKey)
	req.Header.Set("X-OpenWebUI-User-Id", user)
	req.Header.Set("X-OpenWebUI-Chat-Id", "c-"+user)
	return s.do(tool, req)
}

// slowArchive is a gzip'd tar whose first entries are files (name, content), then n entries
// of one byte under one name: extracting those takes tar seconds (one unlink and create
// each), so a kill lands while it runs, after the first ones are written.
func slowArchive(t *testing.T, files [][2]string, n int) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	add := func(name, content string) {
		must(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg, ModTime: time.Now()}))
		_, err := tw.Write([]byte(content))
		must(t, err)
	}
	for _, f := range files {
		add(f[0], f[1])
	}
	for range n {
		add("z", "z")
	}
	must(t, tw.Close())
	must(t, zw.Close())
	return buf.Bytes()
}

// TestKill9DuringGroupCommandKeepsItsGuards (issue 32 item 3): bob's slow tar in the group
// rewrites alice's owner_ro file and carol's locked file, plants .git/config and adds a file
// of his own; the server is killed with SIGKILL while tar still runs. After the restart,
// before any call, the recovery has applied the command's guards: alice's and carol's files
// are as in HEAD, .git is gone, and what bob was allowed to change is committed with bob as
// author under a message naming his command; no command record is left and the group's
// recorded usage equals the disk.
func TestKill9DuringGroupCommandKeepsItsGuards(t *testing.T) {
	t.Parallel() // its own binary process, storage and state; it waits on events (issue 34)
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	base := filepath.Join(dir, "data")
	srv := startBinary(t, bin, base, crashEnv...)
	killDuringCommand(t, srv, srv, base)
	srv = startBinary(t, bin, base, crashEnv...)
	checkRecovered(t, dir, base, openState(t, "sqlite", "file:"+filepath.Join(base, "fileshed.sqlite")+"?_pragma=busy_timeout(5000)"))
	afterRecovery(t, srv)
}

// TestKill9DuringGroupCommandOnAReplica: the same with two replicas (state.driver postgres):
// bob's tar runs on the second, which is killed; the leader, the first, applies the guards
// of the dead replica's command when it cleans up after it, and the group works on.
func TestKill9DuringGroupCommandOnAReplica(t *testing.T) {
	t.Parallel() // its own binary process, storage and state; it waits on events (issue 34)
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if !pgtest.Installed() {
		t.Skip("PostgreSQL is not installed")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	base := filepath.Join(dir, "data")
	url := pgtest.URL(t)
	env := append([]string{"FILESHED_STATE_DRIVER=postgres", "FILESHED_STATE_URL=" + url}, crashEnv...)
	leader := startBinary(t, bin, base, env...)
	victim := startBinary(t, bin, base, env...)
	killDuringCommand(t, leader, victim, base)
	killed := time.Now()
	db := openState(t, "pgx", url)
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM commands`).Scan(&n); err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the leader never recovered the dead replica's command")
		}
	}
	t.Logf("the leader recovered the command %v after the kill", time.Since(killed).Round(100*time.Millisecond))
	checkRecovered(t, dir, base, db)
	afterRecovery(t, leader)
}

// killDuringCommand prepares the group on setup (alice's owner_ro file, carol's file in a
// locked edit, the archive), starts bob's slow tar on victim and kills victim with SIGKILL
// once tar has written alice's file and .git/config, while it still runs.
func killDuringCommand(t *testing.T, setup, victim *server, base string) {
	t.Helper()
	if _, err := setup.callAs(t, "alice", "shed_create_file", map[string]any{"path": "alice.md", "content": "alice's\n", "mode": "owner_ro"}); err != nil {
		t.Fatal(err)
	}
	if _, err := setup.callAs(t, "carol", "shed_create_file", map[string]any{"path": "carol.md", "content": "carol's\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := setup.callAs(t, "carol", "shed_lockedit_open", map[string]any{"path": "carol.md"}); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(base, "groups", "team", "data")
	archive := slowArchive(t, [][2]string{{"bob.md", "bob's own\n"}, {"alice.md", "bob was here\n"},
		{"carol.md", "bob was here too\n"}, {".git/config", "[core]\n\tfsmonitor = touch /tmp/owned\n"}}, 40000)
	must(t, os.WriteFile(filepath.Join(data, "a.tar.gz"), archive, 0o600))
	done := make(chan error, 1)
	go func() {
		_, err := victim.callAs(t, "bob", "shed_exec", map[string]any{"cmd": "tar", "args": []string{"-xzf", "a.tar.gz"}, "timeout": 240})
		done <- err
	}()
	planted := filepath.Join(data, ".git", "config")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(planted); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the command ended before it planted .git/config: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never planted .git/config")
		}
	}
	must(t, victim.cmd.Process.Kill()) // SIGKILL: no settlement, no deferred cleanup
	_ = victim.cmd.Wait()
	if err := <-done; err == nil {
		t.Fatal("the command finished before the kill: the test did not hit the window")
	}
	if b, _ := os.ReadFile(filepath.Join(data, "alice.md")); string(b) != "bob was here\n" {
		t.Fatalf("alice.md at the kill: %q (the command had not rewritten it)", b)
	}
}

// checkRecovered checks the group after the recovery of bob's killed command: the files he
// could not change as in HEAD, .git gone, his own change committed as his under his
// command's name, the zone equal to its history, no command record, the usage exact.
func checkRecovered(t *testing.T, dir, base string, db *sql.DB) {
	t.Helper()
	data := filepath.Join(base, "groups", "team", "data")
	for rel, want := range map[string]string{"alice.md": "alice's\n", "carol.md": "carol's\n", "bob.md": "bob's own\n"} {
		if b, err := os.ReadFile(filepath.Join(data, rel)); err != nil || string(b) != want {
			t.Errorf("%s after the recovery: %q, %v; want %q", rel, b, err, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(data, ".git")); err == nil {
		t.Error(".git planted by the killed command is still in the group zone")
	}
	gitDir := filepath.Join(base, "groups", "team", "repo.git")
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"--git-dir", gitDir, "--work-tree", data}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(dir, "index"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if head := git("log", "-1", "--format=%an|%s"); !strings.HasPrefix(head, "bob|shed_exec: tar -xzf a.tar.gz (interrupted") {
		t.Errorf("the recovery commit: %q, want bob's, naming his command", head)
	}
	if show := git("show", "HEAD:alice.md"); show != "alice's\n" {
		t.Errorf("alice.md in HEAD: %q", show)
	}
	if show := git("show", "HEAD:bob.md"); show != "bob's own\n" {
		t.Errorf("bob.md in HEAD: %q", show)
	}
	git("read-tree", "HEAD")
	git("add", "-A")
	if st := git("diff", "--cached", "--name-status", "HEAD"); st != "" {
		t.Errorf("after the recovery the zone differs from its history:\n%s", st)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM commands`).Scan(&n); err != nil || n != 0 {
		t.Errorf("command records after the recovery: %d, %v", n, err)
	}
	var used int64
	if err := db.QueryRow(`SELECT bytes FROM usage WHERE owner_kind = 'group' AND owner_id = 'team'`).Scan(&used); err != nil {
		t.Fatal(err)
	}
	// The quota's measure: the files, the history and carol's working copy.
	space := filepath.Dir(data)
	if disk := testtool.RegularSize(t, data) + historyAt(t, space) + testtool.RegularSize(t, filepath.Join(space, "editzone")); used != disk {
		t.Errorf("the group's recorded usage %d, disk %d", used, disk)
	}
}

// afterRecovery: the group works on after the recovery; alice's file is still hers.
func afterRecovery(t *testing.T, srv *server) {
	t.Helper()
	if _, err := srv.callAs(t, "bob", "shed_exec", map[string]any{"cmd": "rm", "args": []string{"z", "a.tar.gz"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.callAs(t, "bob", "shed_patch_text", map[string]any{"path": "alice.md", "content": "x"}); err == nil {
		t.Error("bob wrote alice's owner_ro file after the recovery")
	}
}

// openState opens a state database with database/sql.
func openState(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	must(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestExecRecordsItsCommandUntilSettled: a writing command in a group or Documents is in the
// state database while it runs (its user, conversation, space and message: what a recovery
// needs), and gone once it ended — done, timed out, refused; a command in Storage (no
// history) or one that cannot write is never recorded.
func TestExecRecordsItsCommandUntilSettled(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	db := stateDB(t, g.env)
	count := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM commands`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	done := make(chan reply, 1)
	go func() {
		done <- g.as("bob", "shed_exec", in(map[string]any{"cmd": "sleep", "args": []string{"30"}, "timeout": 2}))
	}()
	var user, conv, kind, owner, msg string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		err := db.QueryRow(`SELECT user_id, conv_id, owner_kind, owner_id, message FROM commands`).Scan(&user, &conv, &kind, &owner, &msg)
		if err == nil {
			break
		}
		if !errors.Is(err, sql.ErrNoRows) || time.Now().After(deadline) {
			t.Fatalf("the running command was never recorded: %v", err)
		}
	}
	if user != "bob" || conv != "c-bob" || kind != "group" || owner != "team" || msg != "shed_exec: sleep 30" {
		t.Errorf("the record: %s %s %s %s %q", user, conv, kind, owner, msg)
	}
	wantError(t, <-done, "TIMEOUT")
	if n := count(); n != 0 {
		t.Fatalf("%d records after the command timed out", n)
	}
	for _, c := range []struct {
		who  string
		args map[string]any
		ok   bool
	}{
		{"bob", in(map[string]any{"cmd": "touch", "args": []string{"b.md"}}), true},
		{"bob", in(map[string]any{"cmd": "rm", "args": []string{"missing.md"}}), true}, // exits 1: still settled
		{"bob", map[string]any{"zone": "documents", "cmd": "touch", "args": []string{"d.md"}}, true},
		{"bob", map[string]any{"zone": "storage", "cmd": "touch", "args": []string{"s.md"}}, true},
		{"bob", in(map[string]any{"cmd": "cat", "args": []string{"b.md"}}), true},
		{"bob", in(map[string]any{"cmd": "touch", "args": []string{"../x"}}), false},
		{"dave", in(map[string]any{"cmd": "touch", "args": []string{"x.md"}}), false}, // not a member
	} {
		r := g.as(c.who, "shed_exec", c.args)
		if r.Success != c.ok {
			t.Errorf("%v: %s", c.args, r.raw)
		}
		if n := count(); n != 0 {
			t.Errorf("%v: %d records after it", c.args, n)
		}
	}
}

// TestCommandSettlesADeadCommandFirst: a command that finds the record of one that died in
// its space (among replicas: before the leader came for the dead replica) settles it first —
// the dead one's guards, its commit as its caller's — and only then runs: carol's command
// never commits what bob's killed command was not allowed to change, nor as hers.
func TestCommandSettlesADeadCommandFirst(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.create("alice", "alice.md", "alice's\n", "owner_ro")
	db := stateDB(t, g.env)
	if _, err := db.Exec(`INSERT INTO commands (id, replica_id, owner_kind, owner_id, user_id, user_name, user_email, conv_id,
		message, protected, started_us) VALUES ('dead1', 'DEADREPLICA00000', 'group', 'team', 'bob', '', '', 'c-bob',
		'shed_exec: tar -xf a.tar', '', $1)`, time.Now().UnixMicro()); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(g.base, "groups", "team", "data")
	for rel, content := range map[string]string{"alice.md": "bob was here\n", ".git/config": "[core]\n", "bob.md": "bob's\n"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(data, rel)), 0o700))
		must(t, os.WriteFile(filepath.Join(data, rel), []byte(content), 0o600))
	}
	wantOK(t, g.as("carol", "shed_exec", in(map[string]any{"cmd": "touch", "args": []string{"c.md"}})))
	g.wantFile("alice.md", "alice's\n")
	if _, err := os.Lstat(filepath.Join(data, ".git")); err == nil {
		t.Error(".git planted by the dead command is still there")
	}
	out, err := exec.Command("git", "--git-dir", filepath.Join(g.base, "groups", "team", "repo.git"), "log", "-2", "--format=%an|%s", "--name-only").CombinedOutput()
	must(t, err)
	log := string(out)
	carol, bob, ok := strings.Cut(log, "bob|shed_exec: tar -xf a.tar (interrupted")
	if !ok || !strings.HasPrefix(carol, "carol|shed_exec: touch c.md") || strings.Contains(carol, "bob.md") ||
		!strings.Contains(bob, "bob.md") || strings.Contains(bob, "alice.md") || strings.Contains(bob, "c.md") {
		t.Errorf("the last two commits:\n%s", log)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM commands`).Scan(&n); err != nil || n != 0 {
		t.Errorf("records left: %d, %v", n, err)
	}
}
