package testtool

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cacheRoot is the folder of Cached's entries: fileshed-test under the user's cache
// directory (~/.cache on Linux, $XDG_CACHE_HOME when set), beside Go's own build cache.
var cacheRoot = func() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "fileshed-test"), nil
}

// cacheIdle is how long an entry nobody used stays: an entry of an older lock file is
// removed by the next fill of its kind.
const cacheIdle = 5 * 24 * time.Hour

// Cached is a folder the tests keep between runs, as Go keeps its build cache: the entry of
// kind (one word without '-') named by the hash of key (what the content is made from: a lock file, a tool's
// version), filled by fill on a miss. fill works in a fresh folder that becomes the entry
// only when it succeeds (a rename: a failed or interrupted fill leaves no entry, two test
// processes filling at once both succeed and one entry stays). With no cache directory
// (no $HOME), fill works in t.TempDir as if there were no cache. The entry is read-only
// by convention: a test that changes it must copy it. Deleting the cache folder is always
// safe; a hit is seen as the entry's modification time, and entries of the same kind
// unused for 5 days are removed on a miss.
func Cached(t testing.TB, kind string, key []byte, fill func(dir string) error) string {
	t.Helper()
	if kind == "" || strings.ContainsAny(kind, "-/"+string(filepath.Separator)) {
		t.Fatalf("cache kind %q: one word, no '-' (it prefixes the entries' names)", kind)
	}
	root, err := cacheRoot()
	if err == nil {
		err = os.MkdirAll(root, 0o700)
	}
	if err != nil {
		dir := t.TempDir()
		if err := fill(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	sum := sha256.Sum256(key)
	entry := filepath.Join(root, kind+"-"+hex.EncodeToString(sum[:12]))
	if _, err := os.Stat(entry); err == nil {
		now := time.Now()
		_ = os.Chtimes(entry, now, now) // used: the trim spares it
		return entry
	}
	tmp, err := os.MkdirTemp(root, ".fill-"+kind+"-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp) // a fill that failed (or called t.Fatal), a fill that came second
	if err := fill(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, entry); err != nil {
		if _, serr := os.Stat(entry); serr != nil { // not another process's fill that came first
			t.Fatal(errors.Join(err, serr))
		}
	}
	trimCache(root, kind, entry)
	return entry
}

// trimCache removes the entries of kind (and abandoned fills of it) unused for cacheIdle,
// but keep.
func trimCache(root, kind, keep string) {
	old, _ := os.ReadDir(root)
	for _, d := range old {
		p := filepath.Join(root, d.Name())
		if p == keep || !(strings.HasPrefix(d.Name(), kind+"-") || strings.HasPrefix(d.Name(), ".fill-"+kind+"-")) {
			continue
		}
		if fi, err := d.Info(); err == nil && time.Since(fi.ModTime()) > cacheIdle {
			os.RemoveAll(p)
		}
	}
}
