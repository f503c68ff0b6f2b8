package core

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fair share of the machine between users (DESIGN §5): at most exec_max_per_user commands
// of one user and exec_max_total in all run at once, and the sum of their memory limits
// (exec_memory_limit_mb each) stays within exec_memory_total_mb, which lowers the total
// when it is the tighter bound. A call that finds no free slot waits up to slotWait, then
// answers TOO_MANY_COMMANDS: a bounded wait, never a queue that one user can fill.

// slotWait is how long a command waits for a free slot.
const slotWait = 2 * time.Second

// slots counts the running commands, per user and in all.
type slots struct {
	mu sync.Mutex
	// free is closed and replaced whenever a slot is released (a broadcast to waiters).
	free    chan struct{}
	total   int
	perUser map[string]int
}

// slotLimits are the effective bounds: per user, and in all (memory included).
func (s *Service) slotLimits() (perUser, total int) {
	total = s.cfg.ExecMaxTotal
	if total == 0 {
		total = 4 * runtime.NumCPU()
	}
	if mb := s.cfg.ExecMemoryLimitMB; mb > 0 {
		budget := s.cfg.ExecMemoryTotalMB
		if budget == 0 {
			budget = int(memTotalMB() / 2)
		}
		total = min(total, max(1, budget/mb))
	}
	return s.cfg.ExecMaxPerUser, total
}

// acquireSlot takes a command slot for user, waiting up to slotWait; release it once.
func (s *Service) acquireSlot(ctx context.Context, user string) (release func(), err error) {
	perUser, total := s.slotLimits()
	timer := time.NewTimer(slotWait)
	defer timer.Stop()
	sl := &s.slots
	for {
		sl.mu.Lock()
		if sl.perUser == nil {
			sl.perUser = map[string]int{}
			sl.free = make(chan struct{})
		}
		if sl.perUser[user] < perUser && sl.total < total {
			sl.perUser[user]++
			sl.total++
			sl.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { sl.release(user) }) }, nil
		}
		mine, all, free := sl.perUser[user], sl.total, sl.free
		sl.mu.Unlock()
		select {
		case <-free:
		case <-ctx.Done():
			return nil, Errf(Timeout, "The call was cancelled while waiting for a command slot").Because(ctx.Err())
		case <-timer.C:
			e := Errf(TooManyCommands, "Too many commands running: %d of yours (at most %d), %d on the server (at most %d)", mine, perUser, all, total).
				With("running_yours", mine).With("max_per_user", perUser).With("running_total", all).With("max_total", total)
			if mine < perUser {
				e.WithHint("The server is busy with other users' commands: wait a few seconds and call again")
			}
			return nil, e
		}
	}
}

// release frees one slot of user and wakes the waiters.
func (sl *slots) release(user string) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.total--
	if sl.perUser[user]--; sl.perUser[user] <= 0 {
		delete(sl.perUser, user)
	}
	close(sl.free)
	sl.free = make(chan struct{})
}

// memTotalMB is the machine's memory (MemTotal of /proc/meminfo) in MB; 8 GiB when it
// cannot be read.
var memTotalMB = sync.OnceValue(func() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 8 << 10
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil && kb > 0 {
				return kb >> 10
			}
		}
	}
	return 8 << 10
})
