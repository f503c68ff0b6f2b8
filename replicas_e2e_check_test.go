package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/confine"
)

// replicasReport is what a replicas run did and what it left: the checks of the issue.
type replicasReport struct {
	base         string
	createCommit string
	calls        []appendCall
	killedAt     int64    // appends acknowledged when the replica was killed
	liveLogs     []string // stderr of the replicas that were not killed
	lockedEdit   string   // the code a writer on another replica got during a locked edit
	downloads    int      // fetches served of a max_downloads=5 link, across replicas
	slowImport   answer   // the import that ran on a live replica through the restart
	// after the run, once the accounting settled (or the wait ran out)
	used, disk        []usage // per user
	leftovers         []string
	settleWait        time.Duration
	fsck              string
	fsckErr           error
	history           []commitLines // commits that touch shared.txt, newest first
	documentsOnDisk   []string
	ownOnDisk         map[int][]string
	unreachable       []string
	documentsAcked    int
	unknownOnKilled   int
	answeredWithError int
}

// usage is a user's bytes and names.
type usage struct{ bytes, names int64 }

// commitLines is a commit of shared.txt and the lines it adds and removes.
type commitLines struct {
	hash           string
	added, removed []string
}

// settle waits (up to settleFor) for the accounting to equal the disk and the leftovers of
// the killed replica to be gone, then reads the files, the history and git fsck.
func (r *replicasReport) settle(t *testing.T, addr string, settleFor time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		r.used, r.disk, r.leftovers = nil, nil, nil
		for i := range e2eUsers {
			a := toolCall(addr, "shed_stats", nil, as{i, "stats"})
			if !a.ok {
				t.Fatalf("shed_stats: %+v", a)
			}
			total, _ := a.data["total"].(map[string]any)
			used, _ := total["used_bytes"].(float64)
			files, _ := total["files_used"].(float64)
			r.used = append(r.used, usage{int64(used), int64(files)})
			id, _ := e2eUser(i)
			disk, leftovers := measureDisk(filepath.Join(r.base, "users", id))
			r.disk, r.leftovers = append(r.disk, disk), append(r.leftovers, leftovers...)
		}
		if slices.Equal(r.used, r.disk) && len(r.leftovers) == 0 || time.Since(start) > settleFor {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	r.settleWait = time.Since(start)
	owner, _ := e2eUser(0)
	docs := filepath.Join(r.base, "users", owner, "Documents")
	r.documentsOnDisk = fileLines(t, filepath.Join(docs, "data", "shared.txt"))
	r.ownOnDisk = map[int][]string{}
	for c := range e2eClients {
		id, _ := e2eUser(c % e2eUsers)
		r.ownOnDisk[c] = fileLines(t, filepath.Join(r.base, "users", id, "Storage", "data", "own", fmt.Sprintf("c%02d.txt", c)))
	}
	git := func(args ...string) (string, error) {
		out, err := exec.Command("git", append([]string{"--git-dir", filepath.Join(docs, "repo.git")}, args...)...).CombinedOutput()
		return string(out), err
	}
	r.fsck, r.fsckErr = git("fsck", "--no-progress", "--no-dangling")
	log, err := git("log", "--format=commit %H", "-p", "--no-renames", "--no-color", "--unified=0", "--", "shared.txt")
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, log)
	}
	for _, l := range strings.Split(log, "\n") {
		switch {
		case strings.HasPrefix(l, "commit "):
			r.history = append(r.history, commitLines{hash: strings.TrimPrefix(l, "commit ")})
		case len(r.history) == 0, strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			r.history[len(r.history)-1].added = append(r.history[len(r.history)-1].added, l[1:])
		case strings.HasPrefix(l, "-"):
			r.history[len(r.history)-1].removed = append(r.history[len(r.history)-1].removed, l[1:])
		}
	}
	for _, c := range r.calls {
		if c.answer.commit != "" {
			if _, err := git("cat-file", "-e", c.answer.commit+"^{commit}"); err != nil {
				r.unreachable = append(r.unreachable, c.answer.commit)
			}
		}
	}
}

// measureDisk sums what the quota counts under a user's directory (as core's walkUsage:
// the bytes of regular files and every name, but the conversations' folders directly in
// Uploads; and, bytes only, the Documents history and the locked edits' working copies),
// and lists the temporary names anywhere in it.
func measureDisk(userDir string) (u usage, leftovers []string) {
	for _, bytesOnly := range []string{"Documents/repo.git/objects", "Storage/editzone", "Documents/editzone"} {
		filepath.WalkDir(filepath.Join(userDir, bytesOnly), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					u.bytes += fi.Size()
				}
			}
			return nil
		})
	}
	for _, zone := range []string{"Uploads", "Storage/data", "Documents/data"} {
		root := filepath.Join(userDir, zone)
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == root {
				return nil
			}
			if confine.IsTempName(d.Name()) {
				leftovers = append(leftovers, strings.TrimPrefix(p, filepath.Dir(filepath.Dir(userDir))+"/"))
			}
			if d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					u.bytes += fi.Size()
				}
			}
			if zone != "Uploads" || filepath.Dir(p) != root || !d.IsDir() {
				u.names++
			}
			return nil
		})
	}
	return u, leftovers
}

// fileLines are the lines of a text file but its first "start" (the file's creation).
func fileLines(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", filepath.Base(p), err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if lines[0] == "start" {
		return lines[1:]
	}
	return lines
}

// violations lists every way the run broke the rules (empty when none did).
func (r *replicasReport) violations() []string {
	var v []string
	add := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	r.documentsAcked, r.unknownOnKilled, r.answeredWithError = 0, 0, 0
	fate := map[string]*appendCall{} // line → its call
	for i := range r.calls {
		c := &r.calls[i]
		fate[c.line] = c
		switch {
		case c.answer.ok && c.documents:
			r.documentsAcked++
		case c.answer.ok:
		case c.answer.transport != nil && c.duringKill:
			r.unknownOnKilled++
		case c.answer.transport != nil:
			add("replica %d (not killed) failed a call: %v", c.replica, c.answer.transport)
		default:
			r.answeredWithError++
			add("replica %d answered %s to an append of client %d", c.replica, c.answer.code, c.client)
		}
	}
	// Every acknowledged append on disk exactly once; nothing on disk that was refused.
	checkLines := func(file string, lines []string, want func(*appendCall) bool) {
		count := map[string]int{}
		for _, l := range lines {
			count[l]++
		}
		for l, n := range count {
			c := fate[l]
			switch {
			case c == nil || !want(c):
				add("%s holds a line no append of it sent: %.40q", file, l)
			case n > 1:
				add("%s holds %q %d times", file, l[:12], n)
			case !c.answer.ok && c.answer.transport == nil:
				add("%s holds %q, whose append was refused (%s)", file, l[:12], c.answer.code)
			}
		}
		for _, c := range r.calls {
			if c.answer.ok && want(&c) && count[c.line] == 0 {
				add("%s lost the acknowledged append %q (replica %d)", file, c.line[:12], c.replica)
			}
		}
	}
	checkLines("shared.txt", r.documentsOnDisk, func(c *appendCall) bool { return c.documents })
	for cl, lines := range r.ownOnDisk {
		checkLines(fmt.Sprintf("own/c%02d.txt", cl), lines, func(c *appendCall) bool { return !c.documents && c.client == cl })
	}
	v = append(v, r.commitViolations(fate)...)
	if r.fsckErr != nil || strings.TrimSpace(r.fsck) != "" {
		add("git fsck: %v %s", r.fsckErr, strings.TrimSpace(r.fsck))
	}
	for _, h := range r.unreachable {
		add("returned commit %s is not in the repository", h)
	}
	for i := range r.used {
		if r.used[i] != r.disk[i] {
			add("user %d: recorded usage %d bytes, %d names; on disk %d bytes, %d names", i, r.used[i].bytes, r.used[i].names, r.disk[i].bytes, r.disk[i].names)
		}
	}
	if !r.slowImport.ok {
		add("the import on a replica that was not killed failed through the restart: %s %v", r.slowImport.code, r.slowImport.transport)
	}
	for _, p := range r.leftovers {
		add("temporary file left: %s", p)
	}
	if r.lockedEdit != "FILE_LOCKED" {
		add("a write on another replica during a locked edit got %q, not FILE_LOCKED", r.lockedEdit)
	}
	if r.downloads != 5 {
		add("a link with max_downloads 5 was served %d times across the replicas", r.downloads)
	}
	for i, logs := range r.liveLogs {
		for _, l := range strings.Split(logs, "\n") {
			if strings.Contains(l, `"level":"ERROR"`) {
				add("a replica that was not killed (%d of %d) logged an error: %.300s", i+1, len(r.liveLogs), l)
			}
		}
	}
	return v
}

// commitViolations checks the history of shared.txt against the answers: each acknowledged
// append's commit is its own and adds its line, and no commit adds or removes anything
// else (but the lines of appends cut by the kill, whose answer never came).
func (r *replicasReport) commitViolations(fate map[string]*appendCall) []string {
	var v []string
	add := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	inHistory := map[string]commitLines{}
	for _, c := range r.history {
		inHistory[c.hash] = c
	}
	answered := map[string]int{}
	for _, c := range r.calls {
		if !c.answer.ok || !c.documents {
			continue
		}
		h := c.answer.commit
		answered[h]++
		cl, ok := inHistory[h]
		switch {
		case h == "":
			add("the acknowledged append %q has no commit", c.line[:12])
		case !ok:
			add("commit %.10s of %q is not in the history of shared.txt", h, c.line[:12])
		case !contains(cl.added, c.line):
			add("commit %.10s of %q does not add its line (adds %d lines)", h, c.line[:12], len(cl.added))
		}
	}
	for h, n := range answered {
		if n > 1 && h != "" {
			add("commit %.10s answered to %d appends", h, n)
		}
	}
	for _, cl := range r.history {
		if cl.hash == r.createCommit {
			continue
		}
		for _, l := range cl.removed {
			add("commit %.10s removes %.40q", cl.hash, l)
		}
		for _, l := range cl.added {
			c := fate[l]
			switch {
			case c == nil:
				add("commit %.10s adds a line nobody sent: %.40q", cl.hash, l)
			case c.answer.ok && c.answer.commit != cl.hash:
				add("commit %.10s adds %q, acknowledged in commit %.10s", cl.hash, l[:12], c.answer.commit)
			case !c.answer.ok && c.answer.transport == nil:
				add("commit %.10s adds %q, whose append was refused", cl.hash, l[:12])
			}
		}
	}
	return v
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// log reports the run's figures.
func (r *replicasReport) log(t *testing.T) {
	t.Helper()
	r.violations() // the counts
	t.Logf("%d appends sent (%d to the shared Documents file, acknowledged %d); killed after %d acknowledged; "+
		"%d cut by the kill; %d answered with an error", len(r.calls), len(r.calls)/2, r.documentsAcked, r.killedAt,
		r.unknownOnKilled, r.answeredWithError)
	t.Logf("shared.txt: %d lines on disk, %d commits touch it (creation excluded)", len(r.documentsOnDisk), len(r.history)-1)
	t.Logf("usage recorded %v, on disk %v (bytes, names per user; after %v); %d leftovers; the slow import: %v %s", r.used, r.disk,
		r.settleWait.Round(time.Millisecond), len(r.leftovers), r.slowImport.ok, r.slowImport.code)
	t.Logf("locked edit across replicas: %q; link max_downloads=5 served %d times", r.lockedEdit, r.downloads)
}
