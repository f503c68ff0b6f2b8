package handlers_test

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/internal/testtool"
)

// randomText is n bytes of base64 text from random bytes: zlib keeps ~76% of it, and no two
// calls share anything a pack's deltas could reuse.
func randomText(n int) string {
	b := make([]byte, n*3/4+3)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)[:n]
}

// historyOnDisk is the size of the user's Documents history: the regular files of
// repo.git/objects (loose objects and packs); 0 before the first commit.
func historyOnDisk(t *testing.T, e *env) int64 {
	t.Helper()
	return historyAt(t, filepath.Join(e.base, "users/local/Documents"))
}

// historyAt is the size of the history of the versioned space at the host folder space.
func historyAt(t *testing.T, space string) int64 {
	t.Helper()
	return testtool.RegularSize(t, filepath.Join(space, "repo.git/objects")) // 0: no history yet
}

// reconcileAgrees runs shed_maintenance and checks that its measure of the disk equals the
// usage recorded incrementally before it, and that both equal the test's own measure.
func reconcileAgrees(t *testing.T, e *env) {
	t.Helper()
	recorded := usage(t, e, "local")
	r := e.post("shed_maintenance", nil, nil)
	wantOK(t, r)
	q := r.Data["quota"].([]any)[0].(map[string]any)
	if q["recorded_bytes"] != float64(recorded) || q["measured_bytes"] != float64(recorded) {
		t.Fatalf("reconcile disagrees with the incremental figure %d: %v", recorded, q)
	}
	if disk := diskUsage(t, e, "local"); disk != recorded {
		t.Fatalf("recorded %d, disk %d", recorded, disk)
	}
}

// TestHistoryCountsAgainstQuota (issue 32 item 8): with a 2 MB quota, twenty rewrites of a
// 200 KB file in Documents made 4 MB of history that no quota saw. The history is counted:
// the rewrites are refused once it fills the quota (packing cannot shrink random text), the
// refusal says history is what fills it, and the recorded usage never passes the quota and
// follows the disk, history included.
func TestHistoryCountsAgainstQuota(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "2"})
	var refused []int
	var last string
	for i := range 20 {
		content := randomText(200 << 10)
		r := e.post("shed_create_file", map[string]any{"zone": "documents", "path": "report.txt", "content": content}, nil)
		if !r.Success {
			wantError(t, r, "QUOTA_EXCEEDED")
			refused = append(refused, i)
			if h, _ := r.Details["history_bytes"].(float64); h <= 0 || r.Details["limit"] != float64(2<<20) {
				t.Fatalf("rewrite %d: details %v", i, r.Details)
			}
			if !strings.Contains(r.Hint, "history") || !strings.Contains(r.Message, "history") {
				t.Fatalf("rewrite %d: the refusal does not say history fills the quota: %s", i, r.raw)
			}
			continue
		}
		last = content
		if used := usage(t, e, "local"); used > 2<<20 {
			t.Fatalf("rewrite %d: usage %d over the 2 MB quota", i, used)
		}
	}
	if len(refused) == 0 || refused[0] < 3 || refused[0] > 12 {
		t.Fatalf("refused rewrites %v: want the quota reached after a few 200 KB versions", refused)
	}
	if got := readFile(t, e, "users/local/Documents/data/report.txt"); got != last {
		t.Fatal("a refused rewrite changed the file")
	}
	// Every write after the first refusal was refused too: nothing freed the history.
	if len(refused) != 20-refused[0] {
		t.Fatalf("refused %v", refused)
	}
	if h := historyOnDisk(t, e); h < 1<<20 {
		t.Fatalf("history %d bytes: the versions were not kept", h)
	}
	r := e.post("shed_stats", nil, nil)
	wantOK(t, r)
	if got := r.Data["documents"].(map[string]any)["history_bytes"]; got != float64(historyOnDisk(t, e)) {
		t.Fatalf("stats history_bytes %v, disk %d", got, historyOnDisk(t, e))
	}
	reconcileAgrees(t, e)
	// Deleting the file frees its current size, not its versions: the refusal said so.
	wantOK(t, e.post("shed_delete", map[string]any{"zone": "documents", "path": "report.txt"}, nil))
	reconcileAgrees(t, e)
}

// TestPackingFreesHistoryBeforeRefusal: rewrites that change a little of a 400 KB file
// fill a 2 MB quota with loose objects (one whole compressed copy per version); before
// refusing, the history is packed (deltas between versions), which frees enough: every
// rewrite succeeds, and the usage follows the packed repository.
func TestPackingFreesHistoryBeforeRefusal(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "2"})
	base := randomText(400 << 10)
	for i := range 10 {
		content := fmt.Sprintf("version %d\n%s", i, base)
		r := e.post("shed_create_file", map[string]any{"zone": "documents", "path": "draft.txt", "content": content}, nil)
		wantOK(t, r)
		if used := usage(t, e, "local"); used > 2<<20 {
			t.Fatalf("rewrite %d: usage %d over the quota", i, used)
		}
	}
	packs, _ := filepath.Glob(filepath.Join(e.base, "users/local/Documents/repo.git/objects/pack/*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs %v: the history was not packed", packs)
	}
	// The versions are all there after packing.
	r := e.post("shed_version", map[string]any{"action": "history", "zone": "documents", "path": "draft.txt"}, nil)
	wantOK(t, r)
	if entries, _ := r.Data["entries"].([]any); len(entries) != 10 {
		t.Fatalf("history: %s", r.raw[:min(len(r.raw), 500)])
	}
	reconcileAgrees(t, e)
}

// TestWorkingCopiesCountAgainstQuota (issue 32 item 8): five working copies held 13.8 MB
// outside every quota. A copy counts from its open (refused when it does not fit), follows
// its overwrites, and is released at save and cancel.
func TestWorkingCopiesCountAgainstQuota(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1"})
	e.write(storageDir+"/a.txt", strings.Repeat("a", 300<<10))
	e.write(storageDir+"/b.txt", strings.Repeat("b", 300<<10))
	e.write("users/local/Documents/data/c.txt", strings.Repeat("c", 100<<10))
	a, b, c := conv("chat-a"), conv("chat-b"), conv("chat-c")
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "a.txt"}, a))
	if used := usage(t, e, "local"); used != 1000<<10 {
		t.Fatalf("usage %d after one open, want the files and the copy", used)
	}
	usageIsDisk(t, e)
	// A second copy does not fit: refused, nothing left behind, no lock.
	r := e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "b.txt"}, b)
	wantError(t, r, "QUOTA_EXCEEDED")
	if exists(e, "users/local/Storage/editzone/chat-b/b.txt") {
		t.Fatal("refused open left a working copy")
	}
	wantOK(t, e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "b.txt", "content": "x", "position": "end"}, nil))
	usageIsDisk(t, e)
	// Overwrites move the count; cancel gives the copy back.
	wantOK(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "a.txt", "content": "short"}, a))
	usageIsDisk(t, e)
	wantError(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "a.txt", "content": strings.Repeat("z", 500<<10)}, a), "QUOTA_EXCEEDED")
	usageIsDisk(t, e)
	// Hostile: a command makes the copy huge (a sparse 50 MB file): stopped at the quota,
	// and the count follows the copy as it is left.
	r = e.post("shed_lockedit_exec", map[string]any{"zone": "storage", "path": "a.txt", "cmd": "truncate", "args": []string{"-s", "50M", "."}}, a)
	if r.Success && r.Data["returncode"] == 0.0 {
		t.Fatalf("a 50 MB copy in a 1 MB quota: %s", r.raw)
	}
	usageIsDisk(t, e)
	if used := usage(t, e, "local"); used > 1<<20 {
		t.Fatalf("usage %d over the quota", used)
	}
	wantOK(t, e.post("shed_lockedit_cancel", map[string]any{"zone": "storage", "path": "a.txt"}, a))
	usageIsDisk(t, e)
	// A Documents copy, saved: the copy is released, the new version counts in history.
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "documents", "path": "c.txt"}, c))
	usageIsDisk(t, e)
	wantOK(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "documents", "path": "c.txt", "content": "new"}, c))
	wantOK(t, e.post("shed_lockedit_exec", map[string]any{"zone": "documents", "path": "c.txt", "cmd": "sed", "args": []string{"-i", "s/new/newer and longer/", "."}}, c))
	usageIsDisk(t, e)
	wantOK(t, e.post("shed_lockedit_save", map[string]any{"zone": "documents", "path": "c.txt"}, c))
	if exists(e, "users/local/Documents/editzone/chat-c/c.txt") {
		t.Fatal("saved copy kept")
	}
	usageIsDisk(t, e)
	reconcileAgrees(t, e)
}

// historyMasks are pinGolden's swaps for the sizes that vary with the commits' times (a
// zlib-compressed timestamp): the history of the space at the host folder space, and each
// usage key holding it besides data bytes of files, written "<data + history>". Values are
// matched with their delimiter, so 240 never matches the start of 2400.
func historyMasks(t *testing.T, space string, data int64, keys ...string) map[string]string {
	t.Helper()
	h := historyAt(t, space)
	m := map[string]string{}
	for _, end := range []string{",", "}"} {
		m[fmt.Sprintf(`"history_bytes":%d%s`, h, end)] = `"history_bytes":"<history>"` + end
		for _, k := range keys {
			m[fmt.Sprintf(`"%s":%d%s`, k, data+h, end)] = fmt.Sprintf(`"%s":"<%d + history>"%s`, k, data, end)
		}
	}
	return m
}

// mergeMasks joins swap maps.
func mergeMasks(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestGroupHistoryCountsAgainstGroupQuota: a group's history counts against the group's
// quota, not the member's: rewrites by two members are refused once it fills the group's
// 2 MB, the refusal names the group's history, and the group's usage follows the disk.
func TestGroupHistoryCountsAgainstGroupQuota(t *testing.T) {
	t.Parallel()
	g := startGroups(t, map[string]string{"FILESHED_QUOTA_PER_GROUP_MB": "2"})
	var refused *reply
	for i := range 20 {
		who := []string{"alice", "bob"}[i%2]
		r := g.as(who, "shed_create_file", map[string]any{"zone": "group", "group": "team", "path": "shared.txt", "content": randomText(200 << 10), "mode": "group"})
		if !r.Success {
			refused = &r
			break
		}
	}
	if refused == nil {
		t.Fatal("twenty 200 KB versions fit a 2 MB group quota")
	}
	wantError(t, *refused, "QUOTA_EXCEEDED")
	if refused.Details["owner"] != "group" || !strings.Contains(refused.Message, "the group's") {
		t.Fatalf("refusal: %s", refused.raw)
	}
	if u := usage(t, g.env, "alice"); u != 0 {
		t.Fatalf("the member was charged %d bytes of the group's history", u)
	}
	r := g.as("alice", "shed_stats", nil)
	wantOK(t, r)
	line := r.Data["groups"].([]any)[0].(map[string]any)
	if h := historyAt(t, filepath.Join(g.base, "groups/team")); line["history_bytes"] != float64(h) || line["used_bytes"] != float64(h+200<<10) {
		t.Fatalf("group line %v, history on disk %d", line, h)
	}
}

// TestHistoryRefusedWithoutGit: without the git program nothing is packed; the write that
// history does not leave room for is refused all the same, saying so.
func TestHistoryRefusedWithoutGit(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no git to find
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "2"})
	base := randomText(400 << 10)
	var refused *reply
	for i := range 10 {
		r := e.post("shed_create_file", map[string]any{"zone": "documents", "path": "draft.txt", "content": fmt.Sprintf("version %d\n%s", i, base)}, nil)
		if !r.Success {
			refused = &r
			break
		}
	}
	if refused == nil || refused.Error != "QUOTA_EXCEEDED" || !strings.Contains(refused.Message, "history") {
		t.Fatalf("refusal: %+v", refused)
	}
	if packs, _ := filepath.Glob(filepath.Join(e.base, "users/local/Documents/repo.git/objects/pack/*.pack")); len(packs) != 0 {
		t.Fatalf("packed without git: %v", packs)
	}
	if !strings.Contains(e.logs.String(), "git program is not installed") {
		t.Fatal("the refusal's log does not say why nothing was packed")
	}
	reconcileAgrees(t, e)
}
