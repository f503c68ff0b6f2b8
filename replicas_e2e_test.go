package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
	"github.com/fileshed/fileshed/internal/pgtest"
	"github.com/fileshed/fileshed/internal/replicatest"
)

// The end-to-end test of several replicas (issue 25, "Tests and benchmarks"): 3 servers on
// one storage directory and one PostgreSQL state, in front of a fake Open WebUI (session
// mode: 3 users); 12 clients append through all of them (one Documents file they share, one
// Storage file each, of their own user), one replica is killed with SIGKILL mid-run and
// restarted while a slow import runs on another. replicasReport
// (replicas_e2e_check_test.go) then checks the disk, the history and the accounting
// against every answer.

const (
	e2eReplicas = 3
	e2eClients  = 12
	e2eRounds   = 20 // per client: one Documents append and one Storage append each
	e2eKilled   = 1  // the replica killed mid-run
	e2eUsers    = 3  // client c writes its own file as user c%3, the shared file as user 0
)

// e2eUser is user i: its id and its Open WebUI token.
func e2eUser(i int) (id, token string) { return fmt.Sprintf("u%d", i), fmt.Sprintf("tok-u%d", i) }

// TestReplicasEndToEnd: with state.driver postgres every acknowledged append is on disk
// once and in its own commit, the accounting equals the disk once the dead replica is
// cleaned up after, a locked edit and a link's download limit hold across replicas, and
// the replicas that were not killed answer every call.
func TestReplicasEndToEnd(t *testing.T) {
	t.Parallel() // owns its replicas, storage, database and fake Open WebUI; mostly waits (issue 34)
	r := runReplicas(t, binary(t), time.Minute)
	r.log(t)
	if v := r.violations(); len(v) > 0 {
		t.Fatalf("%d violations:\n%s", len(v), strings.Join(v, "\n"))
	}
}

// TestReplicasEndToEndNegativeControl is the same run with the in-process Locker forced (a
// binary built with -tags fileshed_inprocess_locks, core/locks_control.go): each replica
// then locks only against itself, and the checks must see it. A test that cannot fail
// proves nothing.
func TestReplicasEndToEndNegativeControl(t *testing.T) {
	t.Parallel() // owns its binary, replicas, storage, database and fake Open WebUI
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin, err := replicatest.Build(t.TempDir(), "fileshed_inprocess_locks")
	if err != nil {
		t.Fatal(err)
	}
	r := runReplicas(t, bin, 2*time.Second) // its usage never settles: no need to wait a minute
	r.log(t)
	v := r.violations()
	if len(v) == 0 {
		t.Fatal("replicas without shared locks showed no violation: the checks cannot tell")
	}
	kinds := map[string]int{}
	detail := regexp.MustCompile(`"[^"]*"|\b[0-9a-f]{10}\b|\b\d+\b|own/c\d+\.txt`)
	for _, x := range v {
		kinds[detail.ReplaceAllString(x, "…")]++
	}
	var lines []string
	for k, n := range kinds {
		lines = append(lines, fmt.Sprintf("%4d × %s", n, k))
	}
	slices.Sort(lines)
	t.Logf("%d violations, as expected without shared locks:\n%s", len(v), strings.Join(lines, "\n"))
}

// answer is what one call got: success, the error code, the commit hash, or a transport
// error (the replica was killed or down: the call's effect is unknown).
type answer struct {
	ok        bool
	code      string
	commit    string
	data      map[string]any
	transport error
}

// client posts tool calls; the timeout only keeps a wedged run from hanging the test.
var client = &http.Client{Timeout: 2 * time.Minute}

// as is who calls: user i in conversation conv.
type as struct {
	user int
	conv string
}

// toolCall posts tool with body to the replica at addr.
func toolCall(addr, tool string, body any, who as) answer {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/"+tool, bytes.NewReader(b))
	_, token := e2eUser(who.user)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-OpenWebUI-Chat-Id", who.conv)
	resp, err := client.Do(req)
	if err != nil {
		return answer{transport: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{transport: err}
	}
	var out struct {
		Success bool           `json:"success"`
		Error   string         `json:"error"`
		Data    map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return answer{code: fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, raw)}
	}
	a := answer{ok: out.Success, code: out.Error, data: out.Data}
	a.commit, _ = out.Data["commit"].(string)
	return a
}

// appendCall is one append sent: its line, the replica it went to, whether that replica
// was the killed one while it was down or being killed (then an unknown effect is allowed),
// and its answer.
type appendCall struct {
	client, replica int
	documents       bool
	line            string
	duringKill      bool
	answer          answer
}

// runReplicas starts the replicas, drives the appends through them, kills and restarts one
// while slow imports run on it and on another, checks the cross-replica locked edit and
// link, and measures what is on disk, once the accounting settled or after settleFor.
func runReplicas(t *testing.T, bin string, settleFor time.Duration) *replicasReport {
	if testing.Short() {
		t.Skip("runs 3 replicas")
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "storage")
	fake := owuitest.New(t)
	for i := range e2eUsers {
		id, token := e2eUser(i)
		fake.AddUser(token, owui.User{ID: id, Email: id + "@x", Name: id, Role: "user"})
	}
	// The slow imports: 4 chunks 3 s apart. One runs on a replica that lives: its temporary
	// file is older than the restarted replica and alive through its start-up. One runs on
	// the replica that is killed: it leaves a temporary file and a reservation (the size the
	// metadata gives) that only the cleaning after a dead replica removes.
	slowID, _ := e2eUser(0)
	cutID, _ := e2eUser(1)
	fake.AddGeneratedFile(slowID, owui.FileInfo{ID: "f-slow", Filename: "slow.bin"}, 4<<16)
	fake.AddGeneratedFile(cutID, owui.FileInfo{ID: "f-cut", Filename: "cut.bin", Size: 4 << 16}, 4<<16)
	for id, chat := range map[string]string{"f-slow": "slow", "f-cut": "cut"} {
		fake.SetDelivery(id, owuitest.Delivery{Chunk: 1 << 16, Pause: 3 * time.Second})
		fake.AddChat(chat, map[string]string{"slow": slowID, "cut": cutID}[chat], id)
	}
	stateURL := pgtest.URL(t)
	rs := make([]*replicatest.Replica, e2eReplicas)
	for i := range rs {
		rs[i] = replicatest.New(t, bin,
			"FILESHED_STORAGE_BASE_PATH="+base, "FILESHED_AUTH_MODE=session",
			"FILESHED_OPENWEBUI_URL="+fake.URL, "FILESHED_OPENWEBUI_TIMEOUT_SECONDS=20",
			"FILESHED_STATE_DRIVER=postgres", "FILESHED_STATE_URL="+stateURL,
			"FILESHED_ENCRYPTION_WORK_DIR="+filepath.Join(dir, fmt.Sprintf("plain%d", i)),
		)
		rs[i].Start(t) // one after the other: the first runs the migrations alone
	}
	rep := &replicasReport{base: base}
	for _, c := range []struct{ zone, path string }{{"documents", "shared.txt"}, {"storage", "locked.txt"}, {"storage", "linked.txt"}} {
		a := toolCall(rs[0].Addr, "shed_create_file", map[string]any{"zone": c.zone, "path": c.path, "content": "start\n"}, as{0, "setup"})
		if !a.ok {
			t.Fatalf("create %s: %+v", c.path, a)
		}
		if c.zone == "documents" {
			rep.createCommit = a.commit
		}
	}

	var killing atomic.Bool // the killed replica is down or being killed
	var acked atomic.Int64
	calls := make([][]appendCall, e2eClients)
	var wg sync.WaitGroup
	for c := range e2eClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2 * e2eRounds {
				ac := appendCall{client: c, replica: (c + i) % e2eReplicas, documents: i%2 == 0}
				body := map[string]any{"position": "end"}
				who := as{0, fmt.Sprintf("conv%02d", c)}
				if ac.documents {
					ac.line = fmt.Sprintf("doc c%02d n%03d %s", c, i/2, strings.Repeat("d", 40))
					body["zone"], body["path"] = "documents", "shared.txt"
				} else {
					ac.line = fmt.Sprintf("own c%02d n%03d %s", c, i/2, strings.Repeat("s", 30+c))
					body["zone"], body["path"] = "storage", fmt.Sprintf("own/c%02d.txt", c)
					who.user = c % e2eUsers
				}
				body["content"] = ac.line + "\n"
				ac.duringKill = ac.replica == e2eKilled && killing.Load()
				ac.answer = toolCall(rs[ac.replica].Addr, "shed_patch_text", body, who)
				ac.duringKill = ac.duringKill || ac.replica == e2eKilled && killing.Load()
				if ac.answer.ok {
					acked.Add(1)
				}
				calls[c] = append(calls[c], ac)
			}
		}()
	}
	total := int64(e2eClients * 2 * e2eRounds)
	for acked.Load() < total/3 {
		time.Sleep(5 * time.Millisecond)
	}
	imported := make(chan answer, 1)
	go func() {
		imported <- toolCall(rs[0].Addr, "shed_import", map[string]any{"file_id": "f-slow"}, as{0, "slow"})
	}()
	go toolCall(rs[e2eKilled].Addr, "shed_import", map[string]any{"file_id": "f-cut"}, as{1, "cut"}) // cut by the kill
	waitForTempFile(t, filepath.Join(base, "users", slowID, "Uploads", "slow"))
	waitForTempFile(t, filepath.Join(base, "users", cutID, "Uploads", "cut"))
	killing.Store(true)
	rs[e2eKilled].Kill()
	rep.killedAt = acked.Load()
	time.Sleep(300 * time.Millisecond)
	rs[e2eKilled].Start(t)
	killing.Store(false)
	wg.Wait()
	rep.slowImport = <-imported
	for _, cs := range calls {
		rep.calls = append(rep.calls, cs...)
	}

	rep.lockedEdit = lockedEditAcross(rs)
	rep.downloads = downloadsAcross(t, rs)
	rep.settle(t, rs[0].Addr, settleFor)
	for i, r := range rs {
		if i != e2eKilled {
			rep.liveLogs = append(rep.liveLogs, r.Logs())
		}
	}
	return rep
}

// waitForTempFile waits until a temporary file exists in dir (a write under way).
func waitForTempFile(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if confine.IsTempName(e.Name()) {
				return
			}
		}
	}
	t.Fatal("the slow import wrote no temporary file")
}

// lockedEditAcross opens a locked edit on one replica and tries a write of the same file
// from another conversation on another replica: the code it got ("" for a success).
func lockedEditAcross(rs []*replicatest.Replica) string {
	if a := toolCall(rs[0].Addr, "shed_lockedit_open", map[string]any{"zone": "storage", "path": "locked.txt"}, as{0, "editor"}); !a.ok {
		return "open: " + a.code
	}
	defer toolCall(rs[0].Addr, "shed_lockedit_cancel", map[string]any{"zone": "storage", "path": "locked.txt"}, as{0, "editor"})
	a := toolCall(rs[2].Addr, "shed_patch_text", map[string]any{"zone": "storage", "path": "locked.txt", "content": "intruder\n"}, as{0, "other"})
	if a.transport != nil {
		return a.transport.Error()
	}
	return a.code
}

// downloadsAcross makes a link with max_downloads 5 on one replica and fetches it 4 times
// from each replica at once: how many fetches were served.
func downloadsAcross(t *testing.T, rs []*replicatest.Replica) int {
	a := toolCall(rs[1].Addr, "shed_link_create", map[string]any{"zone": "storage", "path": "linked.txt", "max_downloads": 5}, as{0, "links"})
	link, _ := a.data["url"].(string)
	u, err := url.Parse(link)
	if !a.ok || err != nil {
		t.Fatalf("link create: %+v", a)
	}
	var served atomic.Int64
	var wg sync.WaitGroup
	for _, r := range rs {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get("http://" + r.Addr + u.RequestURI())
				if err != nil {
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK && string(body) == "start\n" {
					served.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	return int(served.Load())
}
