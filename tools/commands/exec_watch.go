package commands

import (
	"sync/atomic"
	"time"

	"github.com/fileshed/fileshed/core"

	"golang.org/x/sys/unix"
)

// The quota watchdog (DESIGN §5): while a writing command runs, the used space and used
// inodes of the zone's file system (statfs, one system call) are read every watchTick.
// When either has grown by more than the quota the command may still use (bytes, names),
// the zone is walked (the exact measure); a zone over the quota gets the command killed
// (its context cancelled: the launcher kills the process tree). statfs sees every block and
// inode used on that file system (other users' too, so it only ever asks for a walk too
// early), but not files that take no blocks (sparse files, e.g. `truncate -s`), inodes on
// a file system that does not count them, nor space freed meanwhile by others:
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
	// killed says the watchdog stopped the command; peakBytes and peakFiles are the largest
	// zone it measured, in bytes and in names.
	killed               atomic.Bool
	peakBytes, peakFiles atomic.Int64
}

// watchGrowth starts a watchdog that calls kill when the zone dir, holding before when the
// command started, grows by more than budget (bytes of regular files, or names), not
// counting others(), what other writers added meanwhile.
func watchGrowth(dir string, before, budget core.Amount, others func() core.Amount, kill func()) *watchdog {
	w := &watchdog{stop: make(chan struct{}), done: make(chan struct{})}
	w.peakBytes.Store(before.Bytes)
	w.peakFiles.Store(before.Files)
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
			if now.Bytes-fsBase.Bytes <= budget.Bytes-(size.Bytes-before.Bytes) &&
				now.Files-fsBase.Files <= budget.Files-(size.Files-before.Files) &&
				time.Since(lastWalk) < max(watchWalkEvery, 10*walkTook) {
				continue
			}
			t0 := time.Now()
			snap, err := core.TakeSnapshot(dir)
			if err != nil {
				continue // a name the walk could not read: the walk after the command decides
			}
			lastWalk, walkTook = time.Now(), time.Since(t0)
			fsBase, size = now, snap.Usage()
			w.peakBytes.Store(max(w.peakBytes.Load(), size.Bytes))
			w.peakFiles.Store(max(w.peakFiles.Load(), size.Files))
			if g := core.Sub(core.Sub(size, before), others()); g.Bytes > 0 && g.Bytes > budget.Bytes || g.Files > 0 && g.Files > budget.Files {
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

// peak is the largest zone the watchdog measured (core.CommandTx.Finish compares it with
// the zone after the command).
func (w *watchdog) peak() core.Amount {
	return core.Amount{Bytes: w.peakBytes.Load(), Files: w.peakFiles.Load()}
}

// fsUsed is the used space (bytes) and used inodes (Files) of the file system holding dir
// (0 when unknown).
func fsUsed(dir string) core.Amount {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return core.Amount{}
	}
	return core.Amount{Bytes: int64(st.Blocks-st.Bfree) * st.Bsize, Files: int64(st.Files - st.Ffree)}
}
