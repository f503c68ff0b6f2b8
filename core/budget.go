package core

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fileshed/fileshed/core/lock"
)

// Fair share of the machine between users (DESIGN §5): at most exec_max_per_user commands
// of one user and exec_max_total in all run at once, and the sum of their memory limits
// (exec_memory_limit_mb each) stays within exec_memory_total_mb, which lowers the total
// when it is the tighter bound. A call that finds no free slot waits up to slotWait, then
// answers TOO_MANY_COMMANDS: a bounded wait, never a queue that one user can fill.
// Everything expensive a user starts takes a slot: commands, PDF reads (poppler runs as a
// command, tools/files read_pdf.go), shed_sqlite calls and zips of a tree (shed_zip, and a
// folder link's ?zip as its creator's).
//
// Some calls also need their owner's turn (ownerTurn): writing commands, and every call
// that works on a decrypted copy of an encrypted zone. They wait for it holding their slot,
// so a user never has more than exec_max_per_user such calls in the server, and each waits
// at most until its own timeout (issue 24 item 13: these waits were unbounded).

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

// slotKind is what takes a slot, for the busy answers.
type slotKind struct {
	// counts names a call that is not a command but takes a command slot ("" for commands).
	counts string
	// again says how to call again.
	again string
}

var (
	CommandSlot = slotKind{again: "call shed_exec again"}
	PdfSlot     = slotKind{counts: "a PDF read", again: "read the PDF again"}
	// SqliteCallSlot: a statement costs CPU and up to sqlite_memory_mb like a command.
	SqliteCallSlot = slotKind{counts: "a shed_sqlite call", again: "call shed_sqlite again"}
	// ZipSlot: a zip of a tree (shed_zip, a folder link's ?zip) reads and compresses a
	// whole tree (issue 24 item 6).
	ZipSlot = slotKind{counts: "a zip", again: "call shed_archive zip again"}
)

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

// errExpired is what await answers when its own bound (not ctx) ran out.
var errExpired = errors.New("wait expired")

// await waits until take, called under sl.mu, succeeds; it gives up when ctx ends (its
// error) or expire fires (errExpired; nil never fires).
func (sl *slots) await(ctx context.Context, expire <-chan time.Time, take func() bool) error {
	for {
		sl.mu.Lock()
		if sl.perUser == nil {
			sl.perUser = map[string]int{}
			sl.free = make(chan struct{})
		}
		if take() {
			sl.mu.Unlock()
			return nil
		}
		free := sl.free
		sl.mu.Unlock()
		select {
		case <-free:
		case <-ctx.Done():
			return ctx.Err()
		case <-expire:
			return errExpired
		}
	}
}

// broadcast wakes every waiter; call it under sl.mu.
func (sl *slots) broadcast() {
	close(sl.free)
	sl.free = make(chan struct{})
}

// AcquireSlot takes a command slot for user, waiting up to slotWait and never past ctx;
// release it once. kind names what the slot is for in the busy answer.
func (s *Service) AcquireSlot(ctx context.Context, user string, kind slotKind) (release func(), err error) {
	perUser, total := s.slotLimits()
	timer := time.NewTimer(slotWait)
	defer timer.Stop()
	sl := &s.slots
	err = sl.await(ctx, timer.C, func() bool {
		if sl.perUser[user] >= perUser || sl.total >= total {
			return false
		}
		sl.perUser[user]++
		sl.total++
		return true
	})
	if err == nil {
		var once sync.Once
		return func() { once.Do(func() { sl.release(user) }) }, nil
	}
	sl.mu.Lock()
	mine, all := sl.perUser[user], sl.total
	sl.mu.Unlock()
	if !errors.Is(err, errExpired) {
		return nil, waitEnded(ctx, "a command slot").With("running_yours", mine).With("max_per_user", perUser).
			WithHint("Wait for your running commands to finish, then %s", kind.again)
	}
	msg := fmt.Sprintf("Too many commands running: %d of yours (at most %d), %d on the server (at most %d)", mine, perUser, all, total)
	hint := fmt.Sprintf("Wait a few seconds for your running commands to finish, then %s (one at a time)", kind.again)
	if kind.counts != "" {
		msg += fmt.Sprintf("; %s takes a command slot too", kind.counts)
		hint = fmt.Sprintf("Your commands, PDF reads, zips and shed_sqlite calls share %d slots: wait a few seconds for them to finish, then %s", perUser, kind.again)
	}
	if mine < perUser {
		hint = "The server is busy with other users' commands: wait a few seconds and " + kind.again
	}
	return nil, Errf(TooManyCommands, "%s", msg).With("running_yours", mine).With("max_per_user", perUser).
		With("running_total", all).With("max_total", total).WithHint("%s", hint)
}

// release frees one slot of user and wakes the waiters.
func (sl *slots) release(user string) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.total--
	if sl.perUser[user]--; sl.perUser[user] <= 0 {
		delete(sl.perUser, user)
	}
	sl.broadcast()
}

// OwnerTurn waits, until ctx ends, for the turn of z's owner: one call at a time per owner
// runs a writing command or works on a decrypted copy of an encrypted zone (every command
// there, and PDF reads), so a user's commands never measure or copy over each other and
// a user has at most one decrypted copy at a time. Call it holding a command slot; release
// the turn once. The wait is bounded by ctx (issue 24 item 13: it was an unbounded queue
// that one user filled).
func (s *Service) OwnerTurn(ctx context.Context, z *Zone, kind slotKind) (release func(), err error) {
	start := time.Now()
	release, err = s.Hold(ctx, ownerKey(kindTurn, z.Owner), lock.Exclusive, "another call in the "+z.Label+" zone")
	if err != nil {
		e, ok := AsError(err)
		if !ok || e.Code != Timeout {
			return nil, err
		}
		hint := "Commands that write, and every command and PDF read in an encrypted zone, run one at a time per owner: " +
			kind.again + " when the running one has finished"
		if kind == CommandSlot {
			hint += fmt.Sprintf(", or with a larger timeout (max %d)", s.cfg.ExecTimeoutMax)
		}
		return nil, e.With("zone", z.Label).With("waited_seconds", int(time.Since(start).Round(time.Second)/time.Second)).WithHint("%s", hint)
	}
	return release, nil
}

// waitEnded is the answer of a wait for what that ctx ended: the call's timeout, or the
// caller gone.
func waitEnded(ctx context.Context, what string) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return Errf(Timeout, "The call's timeout ended while waiting for %s", what).Because(ctx.Err())
	}
	return Errf(Timeout, "The call was cancelled while waiting for %s", what).Because(ctx.Err())
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
