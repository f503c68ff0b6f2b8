package handlers_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fileshed/fileshed/internal/testtool"
)

// TestSearchHugeOneLineFile: a 100 MB file of one line is searched in bounded windows: the
// answer shows the match within a line cut to 200 bytes, whatever the line's length. The
// time is bounded by the command timeout: ten names of that file (hard links: 1 GB to
// match) and a regex without a literal to look for, under a 1-second timeout, answer
// TIMEOUT naming how far the search got (fewer than the ten files), and the caller's slot
// is free again at once (the next call runs).
func TestSearchHugeOneLineFile(t *testing.T) {
	t.Parallel()
	// The window is shown whatever the machine's speed (a minute to scan, -race included);
	// the clock's part runs on the same storage with a 1-second timeout.
	e := start(t, map[string]string{"FILESHED_EXEC_TIMEOUT_DEFAULT": "60"})
	line := bytes.Repeat([]byte("x"), 100<<20)
	copy(line[99<<20:], "a needle in the haystack")
	big := e.write(zoneDir+"big/huge0.txt", string(line))
	r := e.post("shed_search", map[string]any{"query": "needle", "zone": "storage"}, nil)
	wantFound(t, r, "storage:big/huge0.txt:1")
	text := r.Data["files"].([]any)[0].(map[string]any)["lines"].([]any)[0].(map[string]any)["text"].(string)
	if !strings.Contains(text, "a needle in the haystack") || len(text) > 200+2*len("…") || !utf8.ValidString(text) ||
		!strings.HasPrefix(text, "…") || !strings.HasSuffix(text, "…") || len(r.raw) > 1000 {
		t.Fatalf("the line shown (%d bytes), answer of %d bytes: %q", len(text), len(r.raw), text)
	}
	e.stop()
	e = serve(t, e.restartConfig(t, map[string]string{"FILESHED_EXEC_TIMEOUT_DEFAULT": "1", "FILESHED_EXEC_MAX_PER_USER": "1"}))
	for i := 1; i < 10; i++ {
		if err := os.Link(big, filepath.Join(filepath.Dir(big), fmt.Sprintf("huge%d.txt", i))); err != nil {
			t.Fatal(err)
		}
	}
	r = e.post("shed_search", map[string]any{"query": `[a-z]+[0-9]`, "regex": true, "zone": "storage"}, nil)
	wantError(t, r, "TIMEOUT")
	if n, ok := r.Details["files_searched"].(float64); !ok || n >= 10 {
		t.Fatalf("the search was not stopped by its timeout: %s", r.raw)
	}
	wantFound(t, e.post("shed_search", map[string]any{"query": "haystack", "names_only": true}, nil))
}

// TestSearchManyTinyFiles: ten thousand tiny files in a hundred folders are all searched in
// one call, names and contents, and a page of names stays within the answer's budget.
func TestSearchManyTinyFiles(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	for i := range 10000 {
		content := "tiny\n"
		if i%1000 == 7 {
			content = "tiny needle\n"
		}
		e.write(fmt.Sprintf("%sd%02d/f%05d.txt", zoneDir, i%100, i), content)
	}
	r := e.post("shed_search", map[string]any{"query": "needle", "zone": "storage"}, nil)
	if got := found(t, r); len(got) != 10 || r.Data["files_searched"] != 10000.0 || r.Data["truncated"] != false {
		t.Fatalf("%d matches: %s", len(got), r.raw)
	}
	r = e.post("shed_search", map[string]any{"query": "f0", "names_only": true, "zone": "storage"}, nil)
	if got := found(t, r); len(got) == 0 || r.Data["truncated"] != true || len(r.raw) > 60000 || r.Data["next_offset"] != float64(len(got)) {
		t.Fatalf("%d names in %d bytes: %.300s", len(got), len(r.raw), r.raw)
	}
}

// TestSearchMillionTinyFiles: a zone of a million tiny files (a thousand folders of a
// thousand hard links of one file each) is searched within the command timeout: the answer is TIMEOUT naming how
// far the search got, small, and the caller's slot is free again at once (the next call, on
// one folder, answers).
func TestSearchMillionTinyFiles(t *testing.T) {
	t.Parallel()
	// The million entries cost the kernel, not the search: on a memory file system and made
	// by linkat relative to their folder they cost a quarter of the disk's time (issue 34).
	cfg := config(t, map[string]string{"FILESHED_EXEC_TIMEOUT_DEFAULT": "1", "FILESHED_EXEC_MAX_PER_USER": "1"})
	cfg.StorageBasePath = testtool.MemDir(t)
	e := serve(t, cfg)
	for d := range 1000 {
		content := "tiny\n"
		if d == 999 { // the last folder holds the matches: the timeout comes first
			content = "tiny needle\n"
		}
		one := e.write(fmt.Sprintf("%sd%03d/f000.txt", zoneDir, d), content)
		// links of one file per folder: a file has at most 65,000
		testtool.LinkMany(t, filepath.Dir(one), "f000.txt", 999, func(f int) string { return fmt.Sprintf("f%03d.txt", f) })
	}
	r := e.post("shed_search", map[string]any{"query": "needle", "zone": "storage"}, nil)
	wantError(t, r, "TIMEOUT")
	if n, ok := r.Details["files_searched"].(float64); !ok || n >= 1_000_000 || len(r.raw) > 2000 {
		t.Fatalf("a million files: %.500s", r.raw)
	}
	r = e.post("shed_search", map[string]any{"query": "needle", "zone": "storage", "path": "d999"}, nil)
	if got := found(t, r); len(got) != 1000 && r.Data["truncated"] != true {
		t.Fatalf("one folder after the timeout: %d matches, %.300s", len(got), r.raw)
	}
}

// TestSearchRefusesBadQueries: RE2 refuses what would need backtracking (backreferences,
// lookaround) and programs too large (a repetition count over 1000, nested counts), with a
// hint; a query is one line of UTF-8 text; a catastrophic pattern for backtracking engines
// runs in linear time.
func TestSearchRefusesBadQueries(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(zoneDir+"a.txt", strings.Repeat("a", 100000)+"!\n")
	for _, c := range []struct {
		name string
		args map[string]any
		code string
	}{
		{"backreference", map[string]any{"query": `(a)\1`, "regex": true}, "INVALID_PARAMETER"},
		{"lookahead", map[string]any{"query": `a(?=b)`, "regex": true}, "INVALID_PARAMETER"},
		{"huge repetition", map[string]any{"query": `a{1001}`, "regex": true}, "INVALID_PARAMETER"},
		{"nested repetitions", map[string]any{"query": `((a{1000}){1000}){1000}`, "regex": true}, "INVALID_PARAMETER"},
		{"empty", map[string]any{"query": ""}, "MISSING_PARAMETER"},
		{"newline", map[string]any{"query": "a\nb"}, "INVALID_PARAMETER"},
		{"NUL", map[string]any{"query": "a\x00b"}, "INVALID_PARAMETER"},
		{"too long", map[string]any{"query": strings.Repeat("a", 1001)}, "INVALID_PARAMETER"},
		{"negative offset", map[string]any{"query": "a", "offset": -1}, "INVALID_PARAMETER"},
		{"bad glob", map[string]any{"query": "a", "path": "[a"}, "INVALID_PARAMETER"},
		{"bad zone", map[string]any{"query": "a", "zone": "nope"}, "INVALID_ZONE"},
		{"no group source", map[string]any{"query": "a", "zone": "group"}, "GROUP_NOT_AVAILABLE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, e.post("shed_search", c.args, nil), c.code)
		})
	}
	wantFound(t, e.post("shed_search", map[string]any{"query": `(a*)*!$`, "regex": true, "zone": "storage"}, nil), "storage:a.txt:1")
	wantFound(t, e.post("shed_search", map[string]any{"query": `^(a|aa)+$`, "regex": true, "zone": "storage"}, nil))
}

// TestSearchHostilePaths: the path argument is checked as every tool checks it ('..' above
// the zone, absolute and drive paths, control characters, the zone's own name), a path that
// exists in no zone is FILE_NOT_FOUND, and symbolic links are never followed: a link to
// another user's zone, to a system file or to a folder outside is counted in
// skipped.symlinks, never named nor read, also when the path names it.
func TestSearchHostilePaths(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	alice := member("alice", "")
	e.write("users/alice/Storage/data/in/a.txt", "needle inside\n")
	e.write("users/bob/Storage/data/secret.txt", "needle of bob\n")
	outside := filepath.Join(e.base, "users/bob/Storage/data")
	for name, target := range map[string]string{"to-bob": outside, "to-secret": filepath.Join(outside, "secret.txt"),
		"passwd": "/etc/passwd", "in/up": "../../../../bob/Storage/data"} {
		if err := os.Symlink(target, filepath.Join(e.base, "users/alice/Storage/data", name)); err != nil {
			t.Fatal(err)
		}
	}
	r := e.post("shed_search", map[string]any{"query": "needle", "zone": "storage"}, alice)
	wantFound(t, r, "storage:in/a.txt:1")
	if sk := r.Data["skipped"].(map[string]any); sk["symlinks"] != 4.0 {
		t.Fatalf("skipped: %s", r.raw)
	}
	for _, leak := range []string{"bob", "secret", "passwd", "root:", "to-", "up"} {
		if strings.Contains(r.raw, leak) {
			t.Fatalf("%q in the answer: %s", leak, r.raw)
		}
	}
	r = e.post("shed_search", map[string]any{"query": "o", "zone": "storage", "path": "passwd"}, alice)
	if wantFound(t, r); r.Data["skipped"].(map[string]any)["symlinks"] != 1.0 {
		t.Fatalf("a link named by path: %s", r.raw)
	}
	for _, c := range []struct{ path, code string }{
		{"..", "PATH_ESCAPE"},
		{"../bob/Storage/data", "PATH_ESCAPE"},
		{"in/../../x", "PATH_ESCAPE"},
		{"/etc", "PATH_ESCAPE"},
		{"C:/x", "PATH_ESCAPE"},
		{"to-bob/secret.txt", "PATH_ESCAPE"},
		{"in/up/secret.txt", "PATH_ESCAPE"},
		{"a\x00b", "INVALID_PATH"},
		{"storage/in", "PATH_STARTS_WITH_ZONE"},
		{"nowhere", "FILE_NOT_FOUND"},
	} {
		t.Run(c.path, func(t *testing.T) {
			r := e.post("shed_search", map[string]any{"query": "needle", "zone": "storage", "path": c.path}, alice)
			wantError(t, r, c.code)
			if strings.Contains(r.raw, "of bob") {
				t.Fatalf("bob's file read: %s", r.raw)
			}
		})
	}
	wantError(t, e.post("shed_search", map[string]any{"query": "needle", "path": "nowhere"}, alice), "FILE_NOT_FOUND")
	wantError(t, e.post("shed_search", map[string]any{"query": "needle", "group": "../users"}, alice), "INVALID_GROUP_ID")
}

// TestSearchTakesACommandSlot: a search is work like a command: with exec_max_per_user 1 and
// a command of alice's running, her search is TOO_MANY_COMMANDS after the slot wait, while
// bob's runs.
func TestSearchTakesACommandSlot(t *testing.T) {
	t.Parallel() // owns its server; waits more than it computes
	e := startLinks(t, map[string]string{"FILESHED_EXEC_MAX_PER_USER": "1"})
	e.write("users/alice/Storage/data/a.txt", "needle\n")
	wait := holdSlot(t, e, "alice")
	r := e.post("shed_search", map[string]any{"query": "needle"}, as("alice"))
	wantError(t, r, "TOO_MANY_COMMANDS")
	if !strings.Contains(r.Message, "a search takes a command slot") {
		t.Fatalf("message: %s", r.raw)
	}
	wantFound(t, e.post("shed_search", map[string]any{"query": "needle"}, as("bob")))
	wait()
	wantFound(t, e.post("shed_search", map[string]any{"query": "needle"}, as("alice")), "storage:a.txt:1")
}
