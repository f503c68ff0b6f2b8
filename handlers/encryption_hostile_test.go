package handlers_test

import (
	"archive/zip"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/internal/testtool"
)

// Sizes of the on-disk format (core/crypt): a 48-byte header, then segments of 64 KiB of
// plaintext plus a 16-byte tag each.
const (
	sealHeader  = 48
	sealSegment = 64 << 10
	sealTag     = 16
)

// segmentAt is the on-disk offset of segment i of a sealed file.
func segmentAt(i int) int { return sealHeader + i*(sealSegment+sealTag) }

// patterned is n bytes of text that differ from segment to segment and from line to line,
// so a byte served from the wrong place (or ciphertext) shows.
func patterned(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), 7))
		b.WriteString(" line ")
		b.WriteString(hex.EncodeToString([]byte{byte(i >> 8), byte(i)}))
		b.WriteString("\n")
	}
	return b.String()[:n]
}

// sealedFile writes content through the server as storage/rel and returns its host path;
// it checks that the file is encrypted on disk.
func (e *env) sealedFile(rel, content string) string {
	e.t.Helper()
	wantOK(e.t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": rel, "content": content}, nil))
	e.sealedOnDisk(zoneDir+rel, content[:min(len(content), 64)])
	return filepath.Join(e.base, zoneDir, rel)
}

// damage rewrites the host file p with change applied to its bytes.
func damage(t *testing.T, p string, change func([]byte) []byte) {
	t.Helper()
	raw, err := os.ReadFile(p)
	must(t, err)
	must(t, os.WriteFile(p, change(raw), 0o600))
}

// wantNothing asserts a refusal with one of the codes that returns none of the content.
func wantNothing(t *testing.T, r reply, plain string, codes ...string) {
	t.Helper()
	for _, c := range codes {
		if r.Error == c {
			if r.Success || len(r.Data) > 0 {
				t.Fatalf("%s came with data: %s", c, r.raw)
			}
			if len(plain) > 32 && strings.Contains(r.raw, plain[len(plain)-32:]) {
				t.Fatalf("the refusal holds plaintext: %s", r.raw)
			}
			return
		}
	}
	t.Fatalf("want one of %v, got status %d: %s", codes, r.Status, r.raw)
}

// TestEncryptedFlippedBit: one flipped bit in the second segment of a 200 KB file makes
// every read of the whole file or of that segment answer DECRYPTION_FAILED with nothing of
// it; the first segment still reads.
func TestEncryptedFlippedBit(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	plain := patterned(200_000)
	p := e.sealedFile("big.txt", plain)
	damage(t, p, func(b []byte) []byte { b[segmentAt(1)+1000] ^= 0x04; return b })

	wantNothing(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "big.txt"}, nil), plain, "DECRYPTION_FAILED")
	wantNothing(t, e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": "big.txt", "offset": 70_000, "length": 100}, nil), plain, "DECRYPTION_FAILED")
	wantNothing(t, e.post("shed_hexdump", map[string]any{"zone": "storage", "path": "big.txt", "offset": 70_000, "length": 64}, nil), plain, "DECRYPTION_FAILED")
	wantNothing(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "big.txt", "offset": 66_000}, nil), plain, "DECRYPTION_FAILED")

	r := e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": "big.txt", "offset": 0, "length": 100}, nil)
	wantOK(t, r)
	if r.Data["content"] != hex.EncodeToString([]byte(plain[:100])) {
		t.Fatalf("the intact first segment: %s", r.raw)
	}
	// shed_file_type reads the start of the file: the plaintext's type, not ciphertext's.
	r = e.post("shed_file_type", map[string]any{"zone": "storage", "path": "big.txt"}, nil)
	wantOK(t, r)
	if !strings.Contains(r.raw, "text/plain") {
		t.Fatalf("file type of the plaintext: %s", r.raw)
	}
	if _, ok := r.Data["hash"]; ok { // the damaged rest has no content hash to name
		t.Fatalf("a hash of a file that cannot be read whole: %s", r.raw)
	}
}

// TestEncryptedTruncated: a file cut inside a segment, at a segment boundary, or inside the
// header is refused with nothing returned.
func TestEncryptedTruncated(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	plain := patterned(200_000)
	for name, size := range map[string]int{
		"mid-segment": segmentAt(1) + 5000,
		"boundary":    segmentAt(2),
		"header":      sealHeader - 10,
		"header-only": sealHeader,
		"in-tag":      segmentAt(1) + 8, // no plaintext size maps to it
	} {
		t.Run(name, func(t *testing.T) {
			p := e.sealedFile(name+".txt", plain)
			damage(t, p, func(b []byte) []byte { return b[:size] })
			for _, r := range []reply{
				e.post("shed_read", map[string]any{"zone": "storage", "path": name + ".txt"}, nil),
				e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": name + ".txt", "offset": 70_000, "length": 10}, nil),
				e.post("shed_hexdump", map[string]any{"zone": "storage", "path": name + ".txt", "offset": 70_000}, nil),
			} {
				wantNothing(t, r, plain, "DECRYPTION_FAILED", "INVALID_ENCRYPTED_FILE")
			}
		})
	}
}

// TestEncryptedSegmentsSwapped: two whole segments exchanged on disk (each authentic on its
// own) are detected by their position.
func TestEncryptedSegmentsSwapped(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	plain := patterned(200_000)
	p := e.sealedFile("swap.txt", plain)
	damage(t, p, func(b []byte) []byte {
		one := bytes.Clone(b[segmentAt(0):segmentAt(1)])
		copy(b[segmentAt(0):], b[segmentAt(1):segmentAt(2)])
		copy(b[segmentAt(1):], one)
		return b
	})
	wantNothing(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "swap.txt"}, nil), plain, "DECRYPTION_FAILED")
	wantNothing(t, e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": "swap.txt", "length": 10}, nil), plain, "DECRYPTION_FAILED")
	wantNothing(t, e.post("shed_file_type", map[string]any{"zone": "storage", "path": "swap.txt"}, nil), plain, "DECRYPTION_FAILED")
	wantNothing(t, e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": "swap.txt", "offset": 70_000, "length": 10}, nil), plain, "DECRYPTION_FAILED")
}

// hashTree maps every file under dir to its bytes (for before/after comparisons).
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	must(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	}))
	return out
}

// TestEncryptionWrongMasterKey: a restart with another master key (or none) logs the
// mismatch at start, refuses the encrypted user's Storage and Uploads for reads and writes,
// changes no byte on disk; the right key brings everything back.
func TestEncryptionWrongMasterKey(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	const secret = "the launch code is 0000\n"
	e.sealedFile("a.txt", secret)
	e.write("users/local/Uploads/c1/up.txt", "uploaded\n")
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "migrate"}, nil))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "d.md", "content": "plain doc\n"}, nil))
	zones := filepath.Join(e.base, "users/local")
	before := hashTree(t, filepath.Join(zones, "Storage"))
	for k, v := range hashTree(t, filepath.Join(zones, "Uploads")) {
		before[k] = v
	}

	e.stop()
	restart := func(key string) *env {
		vars := map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": key}
		if key == "" {
			vars = nil
		}
		return serve(t, e.restartConfig(t, vars))
	}
	for _, c := range []struct{ key, code string }{
		{"another-master-key-0123456789abcdef012345", "INVALID_ENCRYPTION_KEY"},
		{"", "ENCRYPTION_KEY_REQUIRED"},
	} {
		t.Run(c.code, func(t *testing.T) {
			b := restart(c.key)
			defer b.stop()
			b.t = t
			if logs := b.logs.String(); !strings.Contains(logs, "encryption") || !strings.Contains(logs, "master key") {
				t.Fatalf("no start-up line about the master key: %s", logs)
			}
			wantError(t, b.post("shed_read", map[string]any{"zone": "storage", "path": "a.txt"}, nil), c.code)
			wantError(t, b.post("shed_read", map[string]any{"zone": "uploads", "path": "up.txt"}, conv("c1")), c.code)
			wantError(t, b.post("shed_create_file", map[string]any{"zone": "storage", "path": "new.txt", "content": "x"}, nil), c.code)
			wantError(t, b.post("shed_patch_text", map[string]any{"zone": "storage", "path": "a.txt", "content": "overwritten"}, nil), c.code)
			wantError(t, b.post("shed_delete", map[string]any{"zone": "storage", "path": "a.txt"}, nil), c.code)
			wantError(t, b.post("shed_encryption", map[string]any{"action": "disable", "confirm": true}, nil), c.code)
			// Documents are not encrypted and stay usable.
			r := b.post("shed_read", map[string]any{"zone": "documents", "path": "d.md"}, nil)
			wantOK(t, r)
			after := hashTree(t, filepath.Join(zones, "Storage"))
			for k, v := range hashTree(t, filepath.Join(zones, "Uploads")) {
				after[k] = v
			}
			if len(after) != len(before) {
				t.Fatalf("%d files before, %d after", len(before), len(after))
			}
			for k, v := range before {
				if after[k] != v {
					t.Fatalf("%s changed on disk", k)
				}
			}
			if strings.Contains(b.logs.String(), c.key) && c.key != "" {
				t.Fatal("the log holds the master key")
			}
		})
	}
	g := restart(masterKey)
	r := g.post("shed_read", map[string]any{"zone": "storage", "path": "a.txt"}, nil)
	wantOK(t, r)
	if r.Data["content"] != secret {
		t.Fatalf("after the right key came back: %s", r.raw)
	}
	r = g.post("shed_read", map[string]any{"zone": "uploads", "path": "up.txt"}, conv("c1"))
	if r.Data["content"] != "uploaded\n" {
		t.Fatalf("upload after the right key came back: %s", r.raw)
	}
	for _, l := range []*testtool.Buffer{e.logs, g.logs} {
		if strings.Contains(l.String(), masterKey) {
			t.Fatal("the log holds the master key")
		}
	}
}

// plainAnywhere lists the files under dir whose bytes contain marker.
func plainAnywhere(t *testing.T, dir, marker string) []string {
	t.Helper()
	var out []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(marker)) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestEncryptionDisableWhileLocked: disable is refused while another conversation holds a
// locked edit, and decrypts nothing; once it is saved (or cancelled), disable works.
func TestEncryptionDisableWhileLocked(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	e.sealedFile("a.txt", "locked secret 1\n")
	e.sealedFile("b.txt", "other secret 2\n")
	open := map[string]any{"action": "open", "zone": "storage", "path": "a.txt"}
	wantOK(t, e.post("shed_lockedit", open, conv("c2")))
	r := e.post("shed_encryption", map[string]any{"action": "disable", "confirm": true}, conv("c1"))
	wantError(t, r, "FILE_LOCKED")
	if !strings.Contains(r.raw, "a.txt") {
		t.Fatalf("the refusal does not name the locked file: %s", r.raw)
	}
	e.sealedOnDisk(zoneDir+"a.txt", "locked secret")
	e.sealedOnDisk(zoneDir+"b.txt", "other secret")
	for _, m := range []string{"locked secret", "other secret"} {
		if left := plainAnywhere(t, e.base, m); len(left) > 0 {
			t.Fatalf("plaintext %q on disk while locked: %v", m, left)
		}
	}
	if st := e.post("shed_encryption", map[string]any{"action": "status"}, nil); st.Data["status"] != "active" {
		t.Fatalf("status after the refused disable: %s", st.raw)
	}
	wantOK(t, e.post("shed_lockedit", map[string]any{"action": "overwrite", "zone": "storage", "path": "a.txt", "content": "saved secret 3\n"}, conv("c2")))
	wantOK(t, e.post("shed_lockedit", map[string]any{"action": "save", "zone": "storage", "path": "a.txt"}, conv("c2")))
	e.sealedOnDisk(zoneDir+"a.txt", "saved secret")
	// A second lock, cancelled, does not block either.
	wantOK(t, e.post("shed_lockedit", map[string]any{"action": "open", "zone": "storage", "path": "b.txt"}, conv("c2")))
	wantError(t, e.post("shed_encryption", map[string]any{"action": "disable", "confirm": true}, conv("c1")), "FILE_LOCKED")
	wantOK(t, e.post("shed_lockedit", map[string]any{"action": "cancel", "zone": "storage", "path": "b.txt"}, conv("c2")))
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "disable", "confirm": true}, conv("c1")))
	if a, b := e.disk("a.txt"), e.disk("b.txt"); a != "saved secret 3\n" || b != "other secret 2\n" {
		t.Fatalf("after disable: %q %q", a, b)
	}
}

// TestEncryptedLinkDownload: a link serves the plaintext (size, ranges across a segment
// boundary, a folder's zip), and a damaged file is cut before its damaged segment, never
// served as ciphertext.
func TestEncryptedLinkDownload(t *testing.T) {
	t.Parallel()
	e := startLinks(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": masterKey})
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "setup"}, as("alice")))
	plain := patterned(200_000)
	for _, f := range []string{"big.txt", "bad.txt", "pub/a.txt"} {
		wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": f, "content": plain}, as("alice")))
	}
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "pub/b.txt", "content": "bee\n"}, as("alice")))
	dir := filepath.Join(e.base, "users/alice/Storage/data")
	for _, f := range []string{"big.txt", "pub/a.txt", "pub/b.txt"} {
		if raw, _ := os.ReadFile(filepath.Join(dir, f)); !bytes.HasPrefix(raw, sealedMagic) {
			t.Fatalf("%s is not encrypted on disk", f)
		}
	}

	url := e.link("alice", map[string]any{"zone": "storage", "path": "big.txt"})["url"].(string)
	g := e.get("GET", url, nil)
	if g.status != 200 || g.body != plain || g.header.Get("Content-Length") != "200000" {
		t.Fatalf("download: %d, %d bytes, Content-Length %q", g.status, len(g.body), g.header.Get("Content-Length"))
	}
	g = e.get("GET", url, map[string]string{"Range": "bytes=70000-70100"})
	if g.status != 206 || g.body != plain[70000:70101] || g.header.Get("Content-Range") != "bytes 70000-70100/200000" {
		t.Fatalf("range: %d %v %q", g.status, g.header, g.body)
	}
	g = e.get("GET", url, map[string]string{"Range": "bytes=65530-65545"}) // exactly across the boundary
	if g.status != 206 || g.body != plain[65530:65546] {
		t.Fatalf("range across the boundary: %d %q", g.status, g.body)
	}

	// The rendered page of a Markdown file is made from the plaintext.
	pg := e.post("shed_save_page", map[string]any{"title": "Heading 7070", "content": "text\n", "path": "n.md"}, as("alice"))
	wantOK(t, pg)
	e.sealedOnDisk("users/alice/Storage/data/n.md", "Heading 7070")
	if g := e.get("GET", pg.Data["url"].(string), nil); g.status != 200 || !strings.Contains(g.body, "<h1") || !strings.Contains(g.body, "Heading 7070") {
		t.Fatalf("page view: %d %.200q", g.status, g.body)
	}

	folder := e.link("alice", map[string]any{"zone": "storage", "path": "pub"})["url"].(string)
	resp, err := http.Get(folder + "?zip")
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	must(t, err)
	got := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		must(t, err)
		b, _ := io.ReadAll(rc)
		rc.Close()
		got[path.Base(f.Name)] = string(b)
	}
	if got["a.txt"] != plain || got["b.txt"] != "bee\n" {
		t.Fatalf("folder zip: %d entries, a.txt %d bytes, b.txt %q", len(got), len(got["a.txt"]), got["b.txt"])
	}

	// One flipped bit in the second segment: the download stops before it.
	bad := filepath.Join(dir, "bad.txt")
	damage(t, bad, func(b []byte) []byte { b[segmentAt(1)+77] ^= 1; return b })
	url = e.link("alice", map[string]any{"zone": "storage", "path": "bad.txt"})["url"].(string)
	for _, rng := range []string{"", "bytes=70000-70100", "bytes=60000-70000"} {
		h := map[string]string{}
		if rng != "" {
			h["Range"] = rng
		}
		g := e.get("GET", url, h)
		start := 0
		if rng != "" {
			start = 60000
			if strings.HasPrefix(rng, "bytes=70000") {
				start = 70000
			}
		}
		if bytes.Contains([]byte(g.body), sealedMagic) || (len(g.body) > 0 && start+len(g.body) > sealSegment) ||
			!strings.HasPrefix(plain[start:], g.body) {
			t.Fatalf("damaged file %q: status %d, %d bytes served past or beside the plaintext", rng, g.status, len(g.body))
		}
		if g.status == 200 && len(g.body) == len(plain) {
			t.Fatalf("damaged file served whole")
		}
	}
}

// TestEncryptedExec: commands see plaintext, what they change or create is written back
// encrypted, rm removes; a command that times out leaves no plaintext anywhere, and a
// mirror left by a crash is removed at the next start.
func TestEncryptedExec(t *testing.T) {
	t.Parallel() // owns its server; its one clock is a 10 s deadline (issue 34)
	e := startSealed(t, nil)
	e.sealedFile("a.txt", "alpha zebra-7731\nbeta\n")
	r := runExec(e, execCall{"zone": "storage", "cmd": "cat", "args": []string{"a.txt"}})
	wantOK(t, r)
	if r.Data["stdout"] != "alpha zebra-7731\nbeta\n" {
		t.Fatalf("cat: %s", r.raw)
	}
	wantOK(t, runExec(e, execCall{"zone": "storage", "cmd": "sed", "args": []string{"-i", "s/beta/gamma-5519/", "a.txt"}}))
	e.sealedOnDisk(zoneDir+"a.txt", "gamma-5519")
	if r := e.post("shed_read", map[string]any{"zone": "storage", "path": "a.txt"}, nil); r.Data["content"] != "alpha zebra-7731\ngamma-5519\n" {
		t.Fatalf("after sed -i: %s", r.raw)
	}
	wantOK(t, runExec(e, execCall{"zone": "storage", "cmd": "echo", "args": []string{"made by echo 4402"}, "stdout_file": "out/new.txt"}))
	e.sealedOnDisk(zoneDir+"out/new.txt", "made by echo")
	if r := e.post("shed_read", map[string]any{"zone": "storage", "path": "out/new.txt"}, nil); r.Data["content"] != "made by echo 4402\n" {
		t.Fatalf("stdout_file: %s", r.raw)
	}
	wantOK(t, runExec(e, execCall{"zone": "storage", "cmd": "rm", "args": []string{"out/new.txt"}}))
	if _, err := os.Stat(filepath.Join(e.base, zoneDir, "out/new.txt")); !os.IsNotExist(err) {
		t.Fatalf("rm left the file: %v", err)
	}

	wantError(t, runExec(e, execCall{"zone": "storage", "cmd": "sleep", "args": []string{"999"}, "timeout": 1}), "TIMEOUT")
	plainDir := filepath.Join(e.base, ".plain")
	if left := workCopies(plainDir); len(left) > 0 {
		t.Fatalf("a mirror left after the timeout: %v", left)
	}
	for _, m := range []string{"zebra-7731", "gamma-5519", "made by echo"} {
		if left := plainAnywhere(t, e.base, m); len(left) > 0 {
			t.Fatalf("plaintext %q left on disk after the timeout: %v", m, left)
		}
	}
	noTemp(t, e.base)

	// A crash leaves a mirror: the next start removes it.
	crashed := filepath.Join(plainDir, "m-crashed1-123")
	must(t, os.MkdirAll(filepath.Join(crashed, "sub"), 0o700))
	must(t, os.WriteFile(filepath.Join(crashed, "sub/left.txt"), []byte("left behind 9981"), 0o600))
	cfg := e.restartConfig(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": masterKey})
	e.stop()
	b := serve(t, cfg)
	b.t = t
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(crashed); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the mirror left by a crash is still there after a restart")
		}
	}
	if left := plainAnywhere(t, e.base, "left behind 9981"); len(left) > 0 {
		t.Fatalf("plaintext left: %v", left)
	}
}

// TestEncryptedSQLite: a database in an encrypted zone round-trips, is encrypted on disk
// (no SQLite header, no row text), and so is a CSV export.
func TestEncryptedSQLite(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	wantOK(t, sqIn(e, "storage", "db/app.db", map[string]any{"query": "CREATE TABLE t(a TEXT)"}))
	wantOK(t, sqIn(e, "storage", "db/app.db", map[string]any{"query": "INSERT INTO t VALUES ('rowsecret-4411'), ('second')"}))
	r := sqIn(e, "storage", "db/app.db", map[string]any{"query": "SELECT a FROM t ORDER BY a"})
	wantOK(t, r)
	if rows := r.Data["rows"].([]any); len(rows) != 2 || rows[0].([]any)[0] != "rowsecret-4411" {
		t.Fatalf("select: %s", r.raw)
	}
	e.sealedOnDisk(zoneDir+"db/app.db", "rowsecret-4411")
	if left := plainAnywhere(t, filepath.Join(e.base, "users"), "SQLite format 3"); len(left) > 0 {
		t.Fatalf("a plain database on disk: %v", left)
	}
	for _, j := range []string{"-wal", "-journal", "-shm"} {
		if _, err := os.Stat(filepath.Join(e.base, zoneDir, "db/app.db"+j)); err == nil {
			t.Errorf("%s left beside the database", j)
		}
	}
	r = sqIn(e, "storage", "db/app.db", map[string]any{"query": "SELECT a FROM t ORDER BY a", "output_csv": "out/t.csv"})
	wantOK(t, r)
	e.sealedOnDisk(zoneDir+"out/t.csv", "rowsecret-4411")
	if r := e.post("shed_read", map[string]any{"zone": "storage", "path": "out/t.csv"}, nil); !strings.Contains(fmt.Sprint(r.Data["content"]), "rowsecret-4411") {
		t.Fatalf("export: %s", r.raw)
	}
	if left := plainAnywhere(t, e.base, "rowsecret-4411"); len(left) > 0 {
		t.Fatalf("row text on disk: %v", left)
	}
}

// TestEncryptedArchive: a zip of encrypted files is encrypted on disk, its info lists the
// plaintext sizes, and unzip restores the plaintext, encrypted on disk.
func TestEncryptedArchive(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	plain := patterned(100_000)
	e.sealedFile("z/a.txt", plain)
	e.sealedFile("z/b.txt", "bee archive 3317\n")
	wantOK(t, e.post("shed_archive", map[string]any{"action": "zip", "zone": "storage", "src": "z", "dest": "z.zip"}, nil))
	e.sealedOnDisk(zoneDir+"z.zip", "bee archive")
	r := e.post("shed_archive", map[string]any{"action": "info", "zone": "storage", "path": "z.zip"}, nil)
	wantOK(t, r)
	sizes := map[string]float64{}
	for _, f := range r.Data["files"].([]any) {
		m := f.(map[string]any)
		sizes[path.Base(m["name"].(string))] = m["size"].(float64)
	}
	if sizes["a.txt"] != 100_000 || sizes["b.txt"] != 17 {
		t.Fatalf("info: %s", r.raw)
	}
	wantOK(t, e.post("shed_archive", map[string]any{"action": "unzip", "zone": "storage", "src": "z.zip", "dest": "out"}, nil))
	var got []string
	_ = filepath.Walk(filepath.Join(e.base, zoneDir, "out"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			got = append(got, p)
		}
		return nil
	})
	if len(got) != 2 {
		t.Fatalf("unzipped: %v", got)
	}
	for _, p := range got {
		rel, _ := filepath.Rel(filepath.Join(e.base, zoneDir), p)
		want := plain
		if path.Base(rel) == "b.txt" {
			want = "bee archive 3317\n"
		}
		e.sealedOnDisk(zoneDir+rel, want[:16])
		orig := "z/" + path.Base(rel)
		if r := runExec(e, execCall{"zone": "storage", "cmd": "cmp", "args": []string{orig, rel}}); !r.Success || r.Data["returncode"] != 0.0 {
			t.Fatalf("%s after unzip differs from %s: %s", rel, orig, r.raw)
		}
	}
	noTemp(t, e.base)
}

// TestEncryptedBridges: what crosses into Documents is plain there (git history and restore
// work), what comes into Storage is encrypted.
func TestEncryptedBridges(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	const docs = "users/local/Documents/data/"
	e.sealedFile("s.txt", "from storage 6620\n")
	wantOK(t, e.post("shed_transfer", map[string]any{"action": "storage_to_documents", "src": "s.txt", "dest": "s.txt"}, nil))
	if b, _ := os.ReadFile(filepath.Join(e.base, docs, "s.txt")); string(b) != "from storage 6620\n" {
		t.Fatalf("copied into Documents: %q", b)
	}
	if h := history(t, e, "s.txt"); len(h) != 1 {
		t.Fatalf("history of the copy: %v", h)
	}
	if git(t, e, "show", "HEAD:s.txt") != "from storage 6620" {
		t.Fatal("git holds something else than the plaintext")
	}

	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "d.md", "content": "v1\n"}, nil))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "d.md", "content": "v2\n", "overwrite": true}, nil))
	wantOK(t, e.post("shed_version", map[string]any{"action": "restore", "zone": "documents", "path": "d.md", "version": "HEAD~1"}, nil))
	if b, _ := os.ReadFile(filepath.Join(e.base, docs, "d.md")); string(b) != "v1\n" {
		t.Fatalf("restore in Documents: %q", b)
	}
	r := e.post("shed_version", map[string]any{"action": "history", "zone": "documents", "path": "d.md"}, nil)
	wantOK(t, r)
	if n := len(r.Data["entries"].([]any)); n != 3 {
		t.Fatalf("history after restore: %s", r.raw)
	}

	wantOK(t, e.post("shed_transfer", map[string]any{"action": "documents_to_storage", "src": "d.md", "dest": "d.md"}, nil))
	e.sealedOnDisk(zoneDir+"d.md", "")
	if r := e.post("shed_read", map[string]any{"zone": "storage", "path": "d.md"}, nil); r.Data["content"] != "v1\n" {
		t.Fatalf("moved into Storage: %s", r.raw)
	}

	e.write("users/local/Uploads/c1/up.txt", "uploaded 8812\n")
	e.write("users/local/Uploads/c1/up2.txt", "uploaded 8813\n")
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "migrate"}, nil))
	e.sealedOnDisk("users/local/Uploads/c1/up.txt", "uploaded 8812")
	wantOK(t, e.post("shed_transfer", map[string]any{"action": "uploads_to_documents", "src": "up.txt", "dest": "up.txt"}, conv("c1")))
	if b, _ := os.ReadFile(filepath.Join(e.base, docs, "up.txt")); string(b) != "uploaded 8812\n" {
		t.Fatalf("moved from Uploads into Documents: %q", b)
	}
	wantOK(t, e.post("shed_transfer", map[string]any{"action": "uploads_to_storage", "src": "up2.txt", "dest": "up2.txt"}, conv("c1")))
	e.sealedOnDisk(zoneDir+"up2.txt", "uploaded 8813")
}

// TestEncryptedEditPaths: the in-place edit tools (patch_text, patch_bytes, convert_eol,
// rename, lockedit exec) keep a file encrypted and right; a copy to a group is plain there.
func TestEncryptedEditPaths(t *testing.T) {
	t.Parallel()
	e := startSealed(t, map[string]string{"FILESHED_GROUPS_STATIC": `{"team":["local"]}`})
	e.sealedFile("e.txt", "one 5150\r\ntwo\r\n")
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"shed_convert_eol", map[string]any{"to": "unix"}, "one 5150\ntwo\n"},
		{"shed_patch_text", map[string]any{"content": "three\n"}, "one 5150\ntwo\nthree\n"},
		{"shed_patch_text", map[string]any{"content": "TWO", "pattern": "^two$", "regex_flags": "m", "position": "replace"}, "one 5150\nTWO\nthree\n"},
		{"shed_patch_bytes", map[string]any{"content": "4f4e45", "position": "replace", "offset": 0, "length": 3}, "ONE 5150\nTWO\nthree\n"},
		{"shed_patch_bytes", map[string]any{"content": "!", "content_format": "raw"}, "ONE 5150\nTWO\nthree\n!"},
	} {
		args := map[string]any{"zone": "storage", "path": "e.txt"}
		for k, v := range c.args {
			args[k] = v
		}
		wantOK(t, e.post(c.tool, args, nil))
		e.sealedOnDisk(zoneDir+"e.txt", "5150")
		if r := e.post("shed_read", map[string]any{"zone": "storage", "path": "e.txt"}, nil); r.Data["content"] != c.want {
			t.Fatalf("after %s: %s", c.tool, r.raw)
		}
	}
	wantOK(t, e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "e.txt", "new_path": "r/e.txt"}, nil))
	e.sealedOnDisk(zoneDir+"r/e.txt", "5150")

	c := conv("c1")
	lock := func(action string, extra map[string]any) reply {
		args := map[string]any{"action": action, "zone": "storage", "path": "r/e.txt"}
		for k, v := range extra {
			args[k] = v
		}
		return e.post("shed_lockedit", args, c)
	}
	wantOK(t, lock("open", nil))
	wantOK(t, lock("exec", map[string]any{"cmd": "sed", "args": []string{"-i", "s/three/drei 6161/", "."}}))
	if left := plainAnywhere(t, e.base, "drei 6161"); len(left) > 0 {
		t.Fatalf("the locked copy is plain on disk: %v", left)
	}
	wantOK(t, lock("save", nil))
	e.sealedOnDisk(zoneDir+"r/e.txt", "drei 6161")
	if r := e.post("shed_read", map[string]any{"zone": "storage", "path": "r/e.txt"}, nil); r.Data["content"] != "ONE 5150\nTWO\ndrei 6161\n!" {
		t.Fatalf("after lockedit exec: %s", r.raw)
	}

	wantOK(t, e.post("shed_transfer", map[string]any{"action": "to_group", "group": "team", "src_zone": "storage", "src_path": "r/e.txt", "dest_path": "e.txt"}, nil))
	got, err := os.ReadFile(filepath.Join(e.base, "groups/team/data/e.txt"))
	if err != nil || string(got) != "ONE 5150\nTWO\ndrei 6161\n!" {
		t.Fatalf("copied to the group: %q %v", got, err)
	}
}

// TestEncryptedImport: a file imported from Open WebUI lands encrypted in Uploads and reads
// back as it was.
func TestEncryptedImport(t *testing.T) {
	t.Parallel()
	e, _ := importWorld(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": masterKey})
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "setup"}, alice("chat-1")))
	wantOK(t, e.post("shed_import", map[string]any{"file_id": "f-report"}, alice("chat-1")))
	e.sealedOnDisk(aliceUploads+"/Report.pdf", "%PDF-1.7 report")
	r := e.post("shed_read_bytes", map[string]any{"zone": "uploads", "path": "Report.pdf", "output_format": "base64"}, alice("chat-1"))
	wantOK(t, r)
	if r.Data["content"] != "JVBERi0xLjcgcmVwb3J0" {
		t.Fatalf("imported file reads %s", r.raw)
	}
}

// TestEncryptedExecWithDamagedFile: a command in a zone holding a damaged encrypted file
// runs without it, and the write-back neither deletes nor rewrites it.
func TestEncryptedExecWithDamagedFile(t *testing.T) {
	t.Parallel()
	e := startSealed(t, nil)
	p := e.sealedFile("bad.txt", patterned(100_000))
	e.sealedFile("good.txt", "good 3003\n")
	damage(t, p, func(b []byte) []byte { b[segmentAt(1)+9] ^= 2; return b })
	before, err := os.ReadFile(p)
	must(t, err)
	r := runExec(e, execCall{"zone": "storage", "cmd": "cat", "args": []string{"bad.txt"}})
	if r.Data["returncode"] == 0.0 || fmt.Sprint(r.Data["not_decrypted"]) != "[bad.txt]" {
		t.Fatalf("cat of a damaged file: %.300s", r.raw)
	}
	wantOK(t, runExec(e, execCall{"zone": "storage", "cmd": "touch", "args": []string{"new.txt"}}))
	wantOK(t, runExec(e, execCall{"zone": "storage", "cmd": "cp", "args": []string{"good.txt", "copy.txt"}}))
	after, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the damaged file was changed by the write-back: %v", err)
	}
	e.sealedOnDisk(zoneDir+"copy.txt", "good 3003")
	wantError(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "bad.txt"}, nil), "DECRYPTION_FAILED")
}
