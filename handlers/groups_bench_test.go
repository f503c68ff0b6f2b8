package handlers_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkGroupExecGuard: `shed_exec touch new.txt` by bob in a zone of 10,000 files
// (100 folders of 100), over loopback HTTP, interleaved: in his Storage (no repository, no
// guard), in a group space whose files have no ownership record (commit, guard with
// nothing to check), and in a group space whose 10,000 files are all alice's in mode
// 'owner' (the guard stats every one of them before and after the command).
func BenchmarkGroupExecGuard(b *testing.B) {
	e := start(b, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key,
		"FILESHED_GROUPS_STATIC": `{"team":["alice","bob"],"free":["bob"]}`})
	const files = 10000
	for _, dir := range []string{"users/bob/Storage/data", "groups/team/data", "groups/free/data"} {
		for i := range files {
			p := filepath.Join(e.base, dir, fmt.Sprintf("d%02d/f%03d.txt", i/100, i%100))
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("content\n"), 0o600); err != nil {
				b.Fatal(err)
			}
		}
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.base, "fileshed.sqlite")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UnixMicro()
	for i := range files {
		if _, err := tx.Exec(`INSERT INTO ownership (group_id, path, owner_id, mode, created_us, updated_us) VALUES ('team', ?, 'alice', 'owner', ?, ?)`,
			fmt.Sprintf("d%02d/f%03d.txt", i/100, i%100), now, now); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	post := poster(b, e, "shed_exec", map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "bob"})
	call := func(body string) func(int) { return func(int) { post(body) } }
	ops := []timed{
		{"storage", call(`{"zone":"storage","cmd":"touch","args":["new.txt"]}`)},
		{"group-no-records", call(`{"zone":"group","group":"free","cmd":"touch","args":["new.txt"]}`)},
		{"group-10k-owned", call(`{"zone":"group","group":"team","cmd":"touch","args":["new.txt"]}`)},
	}
	for _, op := range ops {
		op.call(0) // the first full commit of the 10,000 files, and warm caches
	}
	p50 := latencies(b, ops...)
	b.ReportMetric(float64(p50[1])/float64(p50[0]), "group/storage")
	b.ReportMetric(float64(p50[2])/float64(p50[0]), "guarded/storage")
	b.ReportMetric(float64(p50[2])/float64(p50[1]), "guarded/group")
}

// BenchmarkGroupWriteBesideCommand (issue 24, item 9): the latency of bob's
// shed_create_file of a small file in a group space, with no command running there ("idle"),
// and while alice's `shed_exec sleep 1` runs there ("during": sent as soon as the command's
// process is seen, one command per iteration), interleaved.
func BenchmarkGroupWriteBesideCommand(b *testing.B) {
	e := start(b, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key,
		"FILESHED_GROUPS_STATIC": `{"team":["alice","bob"]}`})
	as := func(user string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": user}
	}
	write, exec := poster(b, e, "shed_create_file", as("bob")), poster(b, e, "shed_exec", as("alice"))
	timeWrite := func(p string) time.Duration {
		t0 := time.Now()
		write(`{"zone":"group","group":"team","path":"` + p + `","content":"bob\n"}`)
		return time.Since(t0)
	}
	dir := filepath.Join(e.base, "groups", "team", "data")
	timeWrite("warm.md")
	idle, during := make([]time.Duration, b.N), make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		idle[i] = timeWrite(fmt.Sprintf("idle/%d.md", i))
		done := make(chan struct{})
		go func() {
			defer close(done)
			exec(`{"zone":"group","group":"team","cmd":"sleep","args":["1"]}`)
		}()
		waitRunning(b, dir)
		during[i] = timeWrite(fmt.Sprintf("during/%d.md", i))
		<-done
	}
	b.StopTimer()
	pct := func(d []time.Duration, p int) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[min(len(s)-1, len(s)*p/100)]
	}
	b.ReportMetric(float64(pct(idle, 50).Microseconds()), "idle-p50-µs")
	b.ReportMetric(float64(pct(idle, 99).Microseconds()), "idle-p99-µs")
	b.ReportMetric(float64(pct(during, 50).Microseconds()), "during-p50-µs")
	b.ReportMetric(float64(pct(during, 99).Microseconds()), "during-p99-µs")
	b.ReportMetric(float64(pct(during, 50))/float64(pct(idle, 50)), "during/idle")
}
