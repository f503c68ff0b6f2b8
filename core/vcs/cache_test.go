package vcs

import (
	"fmt"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fileshed/fileshed/internal/testtool"
)

// blob is an in-memory object of n bytes whose content names i.
func blob(i, n int) plumbing.EncodedObject {
	o := &plumbing.MemoryObject{}
	o.SetType(plumbing.BlobObject)
	b := []byte(fmt.Sprintf("%0*d", n, i))
	_, _ = o.Write(b)
	return o
}

// The cache never holds more than its budget however many repositories fill it, keeps each
// repository's objects to itself, and Clear drops one repository's objects only.
func TestObjectCacheBoundedAndPerRepository(t *testing.T) {
	t.Parallel()
	const budget = 64 << 10
	c := newObjectLRU(budget)
	views := []repoCache{newRepoCache(c), newRepoCache(c), newRepoCache(c)}
	for i := range 3000 {
		v := views[i%len(views)]
		v.Put(blob(i, 100))
		if _, used := c.size(); used > budget {
			t.Fatalf("after %d objects the cache charges %d bytes, budget %d", i+1, used, budget)
		}
	}
	n, used := c.size()
	if n == 0 || used < budget/2 {
		t.Fatalf("cache holds %d objects (%d bytes): it should be nearly full", n, used)
	}
	last := blob(2999, 100)
	if _, ok := views[2999%3].Get(last.Hash()); !ok {
		t.Error("the most recent object was evicted")
	}
	if _, ok := views[(2999+1)%3].Get(last.Hash()); ok {
		t.Error("a repository sees another repository's cached object")
	}
	if _, ok := views[0].Get(blob(0, 100).Hash()); ok {
		t.Error("the oldest object is still cached past the budget")
	}
	views[2].Clear()
	for el := c.ll.Front(); el != nil; el = el.Next() {
		if el.Value.(*objectEntry).key.repo == views[2].id {
			t.Fatal("Clear left an object of its repository")
		}
	}
	if n2, _ := c.size(); n2 == 0 || n2 >= n {
		t.Errorf("Clear of one repository of three: %d objects before, %d after", n, n2)
	}
	big := blob(1, budget/4)
	views[0].Put(big)
	if _, ok := views[0].Get(big.Hash()); ok {
		t.Error("an object larger than an eighth of the budget was cached")
	}
}

// Real repositories share the process cache: many repositories with long histories stay
// within its budget, history reads stay right while objects are evicted under them, a
// repository never reads an object only another one holds, and Close drops its objects.
func TestReposShareTheBoundedObjectCache(t *testing.T) {
	if !testtool.Alone(t, nil, nil) { // it swaps the process-wide object cache
		return
	}
	saved := objects
	objects = newObjectLRU(32 << 10)
	t.Cleanup(func() { objects = saved })
	var repos []*Repo
	var heads []string
	for i := range 8 {
		z := newZone(t)
		r := z.open(t)
		var head string
		for j := range 20 {
			z.write(t, "f.txt", fmt.Sprintf("repo %d version %d\n", i, j))
			l, err := r.Lock()
			if err != nil {
				t.Fatal(err)
			}
			head, err = l.CommitPaths([]string{"f.txt"}, Signature{Name: "u"}, "v")
			l.Unlock()
			if err != nil {
				t.Fatal(err)
			}
		}
		repos, heads = append(repos, r), append(heads, head)
	}
	for round := range 2 {
		for i, r := range repos {
			log, err := r.Log("f.txt", 0)
			if err != nil || len(log) != 20 {
				t.Fatalf("round %d repo %d: %d entries, %v", round, i, len(log), err)
			}
			got, err := r.FileAt(heads[i], "f.txt")
			if want := fmt.Sprintf("repo %d version 19\n", i); err != nil || string(got) != want {
				t.Fatalf("repo %d reads %q (%v), want %q", i, got, err, want)
			}
			if _, used := objects.size(); used > 32<<10 {
				t.Fatalf("shared cache charges %d bytes, budget %d", used, 32<<10)
			}
		}
	}
	if _, err := repos[1].FileAt(heads[0], "f.txt"); err == nil {
		t.Error("repository 1 read a commit that only repository 0 holds (cached from 0)")
	}
	if n, _ := objects.size(); n == 0 {
		t.Fatal("nothing was cached")
	}
	for _, r := range repos {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n, used := objects.size(); n != 0 || used != 0 {
		t.Errorf("after every repository closed the cache holds %d objects (%d bytes)", n, used)
	}
}
