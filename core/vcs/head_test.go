package vcs

import "testing"

// TestHead: "" on an unborn branch, then the id of each new commit, which FileAt reads back.
func TestHead(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	r := z.open(t)
	l, err := r.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if h, err := l.Head(); err != nil || h != "" {
		t.Fatalf("unborn: %q %v", h, err)
	}
	z.write(t, "a.txt", "one")
	first, err := l.CommitPaths([]string{"a.txt"}, Signature{Name: "u"}, "one")
	if err != nil {
		t.Fatal(err)
	}
	z.write(t, "a.txt", "two")
	if _, err := l.CommitPaths([]string{"a.txt"}, Signature{Name: "u"}, "two"); err != nil {
		t.Fatal(err)
	}
	second, err := l.Head()
	if err != nil || second == first || len(second) != 40 {
		t.Fatalf("after two commits: %q (first %q) %v", second, first, err)
	}
	for rev, want := range map[string]string{first: "one", second: "two"} {
		if b, err := l.FileAt(rev, "a.txt"); err != nil || string(b) != want {
			t.Errorf("FileAt(%s) = %q %v", rev, b, err)
		}
	}
}
