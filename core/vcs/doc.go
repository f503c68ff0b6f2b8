// Package vcs versions a zone's work tree (the Documents zone and every group
// zone) in a git repository whose git directory lives OUTSIDE the work tree.
//
// Where it sits: core/vcs is a leaf under core. core keeps one *Repo per open
// repository, shared by every caller (the Repo's lock is the per-repository
// lock: every go-git call and every commit goes through it, and a shed_exec in
// the zone takes it before and after its run), closes the ones nobody uses (a
// bounded, idle-evicting cache),
// and translates the errors returned here into its own catalogue once. Every
// Repo reads objects through one process-wide object cache with a fixed
// memory budget (cache.go), so memory does not grow with the number of
// repositories.
//
// Why the git directory is outside: anything a user command writes inside the
// zone (a .git/config with core.fsmonitor, a hook) must never be read by
// versioning. Nothing here ever reads a path named ".git" in the work tree,
// and such paths are never committed.
//
// How commits are made: go-git's Worktree.Add/Status/Commit are too slow at
// 10,000 files (a full status per commit), so commits are built at the
// plumbing level: the index is kept in memory (validated against the file on
// disk before every use) as a stat cache, only changed files are hashed, trees
// are rebuilt only along changed directories, and the index and the branch
// ref are replaced atomically through git-style ".lock" files. go-git is used
// for storage, object encoding/decoding, the index format and history.
//
// Crash safety: after a kill -9 at any point the repository opens and the
// next commit works: the holder of the authority over every writer removes
// stale *.lock files and rebuilds the index from HEAD when it is unreadable or
// does not match HEAD (Locked.Recover: core calls it under its Locker's
// repository key at the first lock after opening; Open removes nothing, since
// its flock is one host's and a lock file may be another host's live one), and
// the branch ref is only ever replaced by rename, so it always names a complete
// commit.
//
// It must never import github.com/fileshed/fileshed/core (the parent),
// handlers, huma or chi. Errors carry work-tree-relative paths only.
package vcs
