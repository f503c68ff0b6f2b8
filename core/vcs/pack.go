package vcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// The size of the history and its packing (issue 32 item 8: the quota counts history).
// Every object a commit adds is a loose object, one zlib-compressed file per version of a
// file; Written tells core how many bytes of them a commit added (no walk of the repository
// per write). Pack replaces them by one pack, where versions of a file are stored as deltas
// of each other, and drops what no commit reaches.

// ErrNoGit is returned by Pack when the git program is not installed: nothing is packed.
var ErrNoGit = errors.New("the git program is not installed: the history cannot be packed")

// Written is the number of bytes of the object files created through this Repo since it
// was opened (loose objects; their files' sizes exactly). Read around a commit under the
// lock, the difference is what the commit added to the history.
func (l *Locked) Written() int64 { return l.r.written.Load() }

// packMemory bounds the memory of git's delta search (pack.windowMemory): the server and
// its commands share a small container.
const packMemory = "64m"

// Pack packs the repository's history: every object reachable from a branch, a tag or the
// index goes into one pack (git repack -a -d: deltas between versions; the packed loose
// objects and the older packs are removed), then the loose objects nothing reaches are
// pruned with git's temporary files (git prune). It runs the git CLI under the repository
// lock, so no writer of this Repo (nor of another process holding the lock) touches the
// repository meanwhile, with no system or user configuration, no hooks, one thread and a
// bounded delta window. ctx bounds it: killed, git leaves temporary files only, which the
// next Pack prunes. ErrNoGit when git is not installed.
func (l *Locked) Pack(ctx context.Context) error {
	r, err := l.held()
	if err != nil {
		return err
	}
	bin, err := exec.LookPath("git")
	if err != nil {
		return ErrNoGit
	}
	// The index is read by repack (objects it names are kept): saved first, so git reads
	// this process's view, not a lagging file.
	if err := r.refresh(); err != nil {
		return err
	}
	r.flushIndex()
	defer r.packsChanged() // the packs this process reads are the new ones
	if err := r.git(ctx, bin, "repack", "-a", "-d", "-q", "--no-write-bitmap-index"); err != nil {
		return err
	}
	return r.git(ctx, bin, "prune", "--expire=now")
}

// git runs one git command on the git directory, with a scrubbed environment and options
// that keep it from running anything but itself.
func (r *Repo) git(ctx context.Context, bin string, args ...string) error {
	// safe.directory: a volume owned by another user than the server's is still ours.
	full := append([]string{"--git-dir=" + r.gitDir, "-c", "safe.directory=" + r.gitDir,
		"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "gc.auto=0",
		"-c", "pack.threads=1", "-c", "pack.windowMemory=" + packMemory, "-c", "repack.writeBitmaps=false"}, args...)
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Dir = r.gitDir
	cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + r.gitDir, "LC_ALL=C",
		"PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(strings.ReplaceAll(stderr.String(), r.gitDir, "repo.git"))
		return fmt.Errorf("git %s: %w: %s", args[0], scrub(err), msg[:min(len(msg), 300)])
	}
	return nil
}

// packsChanged makes go-git read the packs again when objects/pack changed since the last
// look (a Pack of this process, or of another one sharing the storage: a replica): its
// index of the packs would name a removed pack; and forgets the fan-out folders known to
// exist (the pack removed those it emptied). One stat per lock; r.mu is held.
func (r *Repo) packsChanged() {
	id, _ := statID(filepath.Join(r.gitDir, "objects", "pack"))
	if id != r.packs {
		r.packs = id
		r.st.Reindex()
		for i := range r.fanout {
			r.fanout[i].Store(false)
		}
	}
}

// HistoryDir is the folder of a repository's history, gitDir/objects: what the quota
// counts of it.
func HistoryDir(gitDir string) string { return filepath.Join(gitDir, "objects") }
