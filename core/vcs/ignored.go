package vcs

// Ignored reports whether a work-tree-relative path has a component that is
// never versioned (.git and its aliases), or is no valid work-tree path:
// what such paths hold is invisible to commits and so to Measure.
func Ignored(p string) bool {
	c, err := cleanPath(p)
	return err != nil || ignoredPath(c)
}

// IgnoredName reports whether one path component is a spelling of ".git" (git's
// is_ntfs_dotgit and is_hfs_dotgit, see ignoredName): the name itself, not a path.
func IgnoredName(name string) bool { return ignoredName(name) }
