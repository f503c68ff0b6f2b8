package vcs

import "testing"

func TestIgnored(t *testing.T) {
	t.Parallel()
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

// TestIgnoredGitSpellings (issue 32): every spelling git itself refuses as ".git" on
// checkout and flags in fsck (hasDotgit) — is_ntfs_dotgit and is_hfs_dotgit in git's
// path.c and utf8.c — is one name never versioned, and names that only look alike are not.
func TestIgnoredGitSpellings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, component string
		want            bool
	}{
		{"plain", ".git", true},
		{"upper", ".GIT", true},
		{"mixed", ".gIt", true},
		{"ntfs trailing dot", ".git.", true},
		{"ntfs trailing space", ".git ", true},
		{"ntfs trailing dots and spaces", ".git . .", true},
		{"ntfs index allocation stream", ".git::$INDEX_ALLOCATION", true},
		{"ntfs named stream", ".git:x", true},
		{"ntfs data stream after a dot", ".git.::$DATA", true},
		{"ntfs stream after space", ".git :y", true},
		{"short name", "git~1", true},
		{"short name upper", "GIT~1", true},
		{"short name stream", "GIT~1:x", true},
		{"short name lower stream", "git~1:x", true},
		{"short name trailing dot", "git~1.", true},
		{"short name trailing space and stream", "git~1 :$DATA", true},
		{"backslash is a separator for fsck", `x\.git`, true},
		{"backslash before the stream", `.git\config`, true},
		{"hfs zero-width non-joiner", ".g\u200cit", true},
		{"hfs zero-width joiner at the end", ".git\u200d", true},
		{"hfs byte order mark first", "\ufeff.git", true},
		{"hfs direction marks", ".\u202eG\u206aI\u200eT", true},
		{"hfs ignorable then ntfs dot", ".g\u200cit.", true},
		{"gitignore", ".gitignore", false},
		{"gitmodules", ".gitmodules", false},
		{"git without dot", "git", false},
		{"dotgit suffix", ".gitx", false},
		{"dotgit dash", ".git-old", false},
		{"short name 10", "git~10", false},
		{"short name 2", "git~2", false},
		{"short name with letter", "git~1x", false},
		{"dot git tilde", ".git~1", false},
		{"stream before the name", "x:.git", false},
		{"other zero width", ".g\u200bit", false},
		{"fullwidth letters", ".ｇｉｔ", false},
		{"empty", "", false},
		{"dot", ".", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := IgnoredName(tc.component); got != tc.want {
				t.Errorf("IgnoredName(%q) = %v, want %v", tc.component, got, tc.want)
			}
			if tc.component == "" || tc.component == "." {
				return
			}
			if got := Ignored("d/" + tc.component + "/f"); got != tc.want {
				t.Errorf("Ignored(d/%q/f) = %v, want %v", tc.component, got, tc.want)
			}
		})
	}
}
