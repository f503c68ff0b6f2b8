package core

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// What shed_search (tools/search) needs of the kernel: its slot kind, and the cache of the
// texts it extracts from PDFs.

// SearchSlot: a search reads whole zones and runs the PDF reader, like a command.
var SearchSlot = slotKind{counts: "a search", again: "call shed_search again"}

// The text cache keeps the text extracted from a file (a PDF) under a key naming its
// content (a SHA-256 the family computes over the owner and the bytes, so that no owner
// learns through the cache whether another holds the same file), so that a second search
// does not extract it again. It lives in the working folder (encryption.work_dir, or
// {storage}/.plain), never in a zone, and holds only texts of zones that are not encrypted
// (their files are plaintext on disk already). Its size is bounded: past textCacheMax
// bytes the least recently used texts are removed down to three quarters of it. Entries are
// written atomically (a temporary file renamed), 0600 in a 0700 folder. (The search keeps
// the texts it used last in memory too: tools/search.)

// textCacheMax bounds the bytes the text cache holds.
const textCacheMax = 256 << 20

// textCache is a cache folder's bookkeeping: its size as last measured.
type textCache struct {
	mu       sync.Mutex
	measured bool
	size     int64
}

// textCaches holds the bookkeeping of each cache folder of the process (servers sharing a
// working folder share it).
var textCaches sync.Map // folder -> *textCache

// textCacheDir is the cache's folder.
func (s *Service) textCacheDir() string { return filepath.Join(s.WorkDir(), "text-cache") }

// validTextKey accepts the keys the family makes: 64 lower-case hex digits (never a path).
func validTextKey(key string) bool {
	if len(key) != 64 {
		return false
	}
	for _, c := range key {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// CachedText is the text cached under key, if any; a hit marks it recently used (its time,
// when it is older than textCacheTouch: a search of many PDFs does not write a time each).
func (s *Service) CachedText(key string) ([]byte, bool) {
	if !validTextKey(key) {
		return nil, false
	}
	p := filepath.Join(s.textCacheDir(), key)
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > textCacheMax {
		return nil, false
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, false
	}
	if now := time.Now(); now.Sub(fi.ModTime()) > textCacheTouch {
		_ = os.Chtimes(p, now, now) // the eviction's order; a failure only makes it evict sooner
	}
	return b, true
}

// textCacheTouch is how old a text's time may be before a hit renews it.
const textCacheTouch = time.Hour

// CacheText stores text under key (a failure is ignored: the next search extracts again).
func (s *Service) CacheText(key string, text []byte) {
	if !validTextKey(key) || int64(len(text)) > textCacheMax/4 {
		return
	}
	dir := s.textCacheDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".tmp-")
	if err != nil {
		return
	}
	_, werr := tmp.Write(text)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), filepath.Join(dir, key)) != nil {
		_ = os.Remove(tmp.Name())
		return
	}
	v, _ := textCaches.LoadOrStore(dir, &textCache{})
	c := v.(*textCache)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.measured {
		c.size, c.measured = s.evictTexts(dir, textCacheMax), true
		return
	}
	if c.size += int64(len(text)); c.size > textCacheMax {
		c.size = s.evictTexts(dir, textCacheMax*3/4)
	}
}

// evictTexts removes the least recently used texts of dir until at most keep bytes remain
// (temporary files older than an hour go too: a crash left them) and returns the bytes left.
func (s *Service) evictTexts(dir string, keep int64) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	type text struct {
		name string
		size int64
		used time.Time
	}
	var texts []text
	var total int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if !validTextKey(e.Name()) {
			if time.Since(fi.ModTime()) > time.Hour {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
			continue
		}
		texts = append(texts, text{e.Name(), fi.Size(), fi.ModTime()})
		total += fi.Size()
	}
	slices.SortFunc(texts, func(a, b text) int { return a.used.Compare(b.used) })
	for _, t := range texts {
		if total <= keep {
			break
		}
		if os.Remove(filepath.Join(dir, t.name)) == nil {
			total -= t.size
		}
	}
	return total
}
