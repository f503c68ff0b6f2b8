package core

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The quota watchdog (DESIGN §5): while a writing command runs, the used space of the
// zone's file system (statfs, one system call) is read every watchTick. When it has grown
// by more than the quota the command may still use, the zone is walked (the exact
// measure); a zone over the quota gets the command killed (its context cancelled: the
// launcher kills the process tree). statfs sees every block written on that file system
// (other users' too, so it only ever asks for a walk too early), but not files that
// take no blocks (sparse files, e.g. `truncate -s`) nor space freed meanwhile by others:
// an exact walk also runs every watchWalkEvery (at least ten times the last walk's
// duration), and the walk after the command is the final word (rollback).
//
// Worst transient overshoot: what the command writes between two ticks plus during one
// walk of the zone (about 3 ms per 1,000 files) and the kill, e.g. ~20 ms at the disk's
// write speed; each single file is also capped at the remaining quota by RLIMIT_FSIZE.

const (
	watchTick      = 5 * time.Millisecond
	watchWalkEvery = 250 * time.Millisecond
)

// watchdog is the running watch of one command.
type watchdog struct {
	stop, done chan struct{}
	// killed says the watchdog stopped the command; peak is the largest zone size it saw.
	killed atomic.Bool
	peak   atomic.Int64
}

// watch starts the watchdog of the command that q measures; kill stops the command. Call
// halt when the command has ended. What single-file writes beside the command add is theirs.
func (q *execQuota) watch(kill func()) *watchdog {
	return watchGrowth(q.z.Fs.Dir(), q.before.total, q.limit-q.used, q.beside.grown, kill)
}

// watchGrowth starts a watchdog that calls kill when the regular files under dir, before
// bytes when the command started, grow by more than budget bytes, not counting others(), the
// bytes other writers added meanwhile.
func watchGrowth(dir string, before, budget int64, others func() int64, kill func()) *watchdog {
	w := &watchdog{stop: make(chan struct{}), done: make(chan struct{})}
	w.peak.Store(before)
	go func() {
		defer close(w.done)
		t := time.NewTicker(watchTick)
		defer t.Stop()
		fsBase, size := fsUsed(dir), before
		lastWalk, walkTook := time.Now(), time.Duration(0)
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			now := fsUsed(dir)
			if now-fsBase <= budget-(size-before) && time.Since(lastWalk) < max(watchWalkEvery, 10*walkTook) {
				continue
			}
			t0 := time.Now()
			snap, err := takeSnapshot(dir)
			if err != nil {
				continue // a name the walk could not read: the walk after the command decides
			}
			lastWalk, walkTook = time.Now(), time.Since(t0)
			fsBase, size = now, snap.total
			if size > w.peak.Load() {
				w.peak.Store(size)
			}
			if growth := size - before - others(); growth > 0 && growth > budget {
				w.killed.Store(true)
				kill()
				return
			}
		}
	}()
	return w
}

// halt stops the watchdog and waits for it.
func (w *watchdog) halt() {
	close(w.stop)
	<-w.done
}

// fsUsed is the used space of the file system holding dir, in bytes (0 when unknown).
func fsUsed(dir string) int64 {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize
}
