package vcs

import "testing"

func TestIgnored(t *testing.T) {
	for p, want := range map[string]bool{
		"a.txt": false, "d/.gitignore": false, "d/git/x": false,
		".git": true, ".git/config": true, "d/.GIT/x": true, "d/.git./x": true, "git~1/x": true,
		"../x": true, "/abs": true, "a\x00b": true,
	} {
		if got := Ignored(p); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", p, got, want)
		}
	}
}
