package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTextCache: a text cached under a key is read back; a key that is not 64 hex digits
// (a path, "..") is neither written nor read; entries are 0600 in a 0700 folder of the
// working folder; past the bound the least recently used go first.
func TestTextCache(t *testing.T) {
	t.Parallel()
	s, _ := testService(t, nil)
	key := func(c byte) string { return strings.Repeat(string(c), 64) }
	s.CacheText(key('a'), []byte("text a"))
	if b, ok := s.CachedText(key('a')); !ok || string(b) != "text a" {
		t.Fatalf("cached text: %q %v", b, ok)
	}
	if _, ok := s.CachedText(key('b')); ok {
		t.Fatal("a text never cached was found")
	}
	for _, bad := range []string{"../" + key('c')[3:], key('A'), key('a')[:63], "", key('a') + "/x"} {
		s.CacheText(bad, []byte("bad"))
		if _, ok := s.CachedText(bad); ok {
			t.Fatalf("key %q accepted", bad)
		}
	}
	dir := s.textCacheDir()
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 || ents[0].Name() != key('a') {
		t.Fatalf("cache folder: %v %v", ents, err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder mode %v", fi.Mode())
	}
	if fi, _ := os.Stat(filepath.Join(dir, key('a'))); fi.Mode().Perm() != 0o600 {
		t.Fatalf("entry mode %v", fi.Mode())
	}
	if filepath.Dir(dir) != s.WorkDir() {
		t.Fatalf("the cache is not in the working folder: %s", dir)
	}

	// Three texts of 10 bytes, used in the order c, a, b: keeping 20 bytes drops c.
	s.CacheText(key('b'), []byte("0123456789"))
	s.CacheText(key('c'), []byte("0123456789"))
	s.CacheText(key('a'), []byte("0123456789"))
	old := time.Now().Add(-3 * time.Hour)
	for i, k := range []string{key('c'), key('a'), key('b')} {
		at := old.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(dir, k), at, at); err != nil {
			t.Fatal(err)
		}
	}
	if left := s.evictTexts(dir, 20); left != 20 {
		t.Fatalf("%d bytes left", left)
	}
	if _, ok := s.CachedText(key('c')); ok {
		t.Fatal("the least recently used text was kept")
	}
	for _, k := range []string{key('a'), key('b')} {
		if _, ok := s.CachedText(k); !ok {
			t.Fatalf("%s was evicted", k[:1])
		}
	}
}
