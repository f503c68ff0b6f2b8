package vcs

import (
	"container/list"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
)

// objectCacheBytes is the memory budget of the decoded-object cache shared by every open
// repository. go-git's default is one 96 MiB cache per repository, and even a cache of
// 512 KiB each grew the live heap of a 64-user soak by ~10 MB a minute: each repository
// filled its own cache as its history grew, and go-git counts only an object's content,
// not the ~3× it really holds for small commits and trees (see objectCost). One cache for
// the process bounds the memory whatever the number of repositories; history walks and
// restores rarely read an object twice, so a small budget loses nothing measurable.
const objectCacheBytes = 8 << 20

// entryOverhead approximates what one cached object costs beyond its content: the
// MemoryObject, its list element and map entry, and the slack of the content's buffer.
const entryOverhead = 256

// objects is the process-wide object cache.
var objects = newObjectLRU(objectCacheBytes)

// repoIDs numbers the views of objects, one per Repo.
var repoIDs atomic.Uint64

// objectKey names an object of one repository: objects are content-addressed, but one
// repository must never see another's objects (a missing object must stay missing).
type objectKey struct {
	repo uint64
	hash plumbing.Hash
}

// objectLRU is a least-recently-used cache of decoded objects under a byte budget charged
// with objectCost.
type objectLRU struct {
	mu     sync.Mutex
	budget int64
	used   int64
	ll     *list.List // of *objectEntry, most recent first
	m      map[objectKey]*list.Element
}

type objectEntry struct {
	key  objectKey
	obj  plumbing.EncodedObject
	cost int64
}

func newObjectLRU(budget int64) *objectLRU {
	return &objectLRU{budget: budget, ll: list.New(), m: map[objectKey]*list.Element{}}
}

// objectCost is what caching o is charged: its content (twice, for the buffer's growth
// slack) plus the bookkeeping.
func objectCost(o plumbing.EncodedObject) int64 { return 2*o.Size() + entryOverhead }

func (c *objectLRU) put(k objectKey, o plumbing.EncodedObject) {
	cost := objectCost(o)
	if cost > c.budget/8 {
		return // one large blob would flush everything else
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		c.ll.MoveToFront(el)
		return
	}
	c.m[k] = c.ll.PushFront(&objectEntry{key: k, obj: o, cost: cost})
	c.used += cost
	for c.used > c.budget {
		c.remove(c.ll.Back())
	}
}

func (c *objectLRU) get(k objectKey) (plumbing.EncodedObject, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[k]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(el)
	return el.Value.(*objectEntry).obj, true
}

// drop removes every object of repository id.
func (c *objectLRU) drop(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.ll.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*objectEntry).key.repo == id {
			c.remove(el)
		}
		el = next
	}
}

// remove unlinks el; c.mu is held.
func (c *objectLRU) remove(el *list.Element) {
	e := c.ll.Remove(el).(*objectEntry)
	delete(c.m, e.key)
	c.used -= e.cost
}

// size reports the number of cached objects and the bytes charged for them.
func (c *objectLRU) size() (n int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len(), c.used
}

// repoCache is one repository's view of an objectLRU (go-git's cache.Object).
type repoCache struct {
	c  *objectLRU
	id uint64
}

var _ cache.Object = repoCache{}

func newRepoCache(c *objectLRU) repoCache { return repoCache{c: c, id: repoIDs.Add(1)} }

// Put implements cache.Object.
func (v repoCache) Put(o plumbing.EncodedObject) { v.c.put(objectKey{v.id, o.Hash()}, o) }

// Get implements cache.Object.
func (v repoCache) Get(h plumbing.Hash) (plumbing.EncodedObject, bool) {
	return v.c.get(objectKey{v.id, h})
}

// Clear implements cache.Object.
func (v repoCache) Clear() { v.c.drop(v.id) }
