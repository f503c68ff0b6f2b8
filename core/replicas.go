package core

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// Run once, not N times (issue 25): replicas (state.driver postgres) share one storage, so
// what one server does alone at start — sweep the leftovers of interrupted writes, reconcile
// the usage they distorted, commit what a killed write left out of the history — must be
// done once, by one of them, and must never take a live replica's writes for leftovers.
//
//   - Each process has a random replica id (confine.Replica), carried by every temporary
//     name it makes, a row in the replicas table that its heartbeat refreshes every
//     replicaBeat (database time), and a liveness lock held on a session of its own.
//   - One replica leads (a session-level advisory lock): when it becomes leader it sweeps
//     every zone once (the start-up sweep of one server), then every beat it looks for dead
//     replicas — silent for replicaQuiet and their liveness lock free — and cleans up after
//     each: its temporary names in the zones of the owners it wrote for (the journal,
//     replica_owners, noted before its first reservation for each), what a killed write left
//     uncommitted in their versioned spaces, and their usage measured again; then its rows go.
//   - Sweeps remove a temporary name only when its replica is dead, or when it is older than
//     tempMaxAge whoever made it (names of an older fileshed carry no id).
//
// All of it is safe when two replicas do it at once (a leader whose session just died, and
// the next one): removing a dead replica's names twice, or reconciling an owner twice under
// its exclusive quota lock, changes nothing. The lock only keeps N replicas from doing it N
// times.

// The replicas' times; variables only so that tests can shorten them before New.
var (
	// replicaBeat is how often a replica writes its heartbeat, and the leader looks for dead
	// replicas.
	replicaBeat = 2 * time.Second
	// replicaQuiet is how long a replica must be silent, with its liveness lock free, to be
	// dead; the leader judges only after its own heartbeats ran that long without a failure
	// (after a database outage, the others get the time to reconnect).
	replicaQuiet = 3 * replicaBeat
)

const (
	// tempMaxAge is the hard bound: a temporary name older than this (file times compared
	// with a file time) is a leftover whoever made it.
	tempMaxAge = 24 * time.Hour
	// ownerCleanTimeout bounds the leader's cleaning of one dead replica's owner (its
	// reconcile waits for the owner's writers); what runs out is tried again next beat.
	ownerCleanTimeout = 30 * time.Second
	// beatCallTimeout bounds one beat's calls to the state database; a stop waits for them.
	beatCallTimeout = 10 * time.Second
)

// cluster is this server's place among the replicas of its storage.
type cluster struct {
	self store.Replica
	// noted are the owners in the journal for this replica (store.Owner → struct{}).
	noted sync.Map
	// leading is set while this replica holds the leader's lock; generation counts the times
	// it became leader (the full sweep runs once per generation).
	leading    atomic.Bool
	generation atomic.Uint64
	// healthy is when the heartbeats last started to succeed (nil after a failure).
	healthy atomic.Pointer[time.Time]
	// beat and quiet are replicaBeat and replicaQuiet when the replica started.
	beat, quiet time.Duration
	stop        func()
	// database names the state database in the process's count of servers (serving); left
	// is set by the first leave.
	database string
	left     atomic.Bool
}

// serving counts this process's servers per state database: they share the process's
// replica id, so its row is theirs together (tests start several). Why a count in the
// process and not the database's view of the liveness lock: a session whose connection
// broke cannot unlock, and the database frees its lock only once it has ended the backend,
// a moment after the stop; asked then, the lock said "another server" and the row stayed.
var serving = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// countServers adds delta (1 at a start, -1 at a stop) to the servers of this process on database
// and returns how many there are then.
func countServers(database string, delta int) int {
	serving.Lock()
	defer serving.Unlock()
	serving.n[database] += delta
	n := serving.n[database]
	if n == 0 {
		delete(serving.n, database)
	}
	return n
}

// startReplica joins the replicas of the storage before the server serves: the liveness lock
// and the row come first, so that no temporary name of this replica exists before a sweep
// elsewhere can tell it is alive.
func (s *Service) startReplica(database string) error {
	host, _ := os.Hostname()
	c := &cluster{self: store.Replica{ID: confine.Replica(), Host: host, PID: int64(os.Getpid())},
		beat: replicaBeat, quiet: replicaQuiet, database: database}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	session, err := s.db.OpenSession(ctx, c.self.ID)
	if err != nil {
		return fmt.Errorf("state database: %w", err)
	}
	if _, err := s.db.Heartbeat(ctx, c.self); err != nil {
		session.Close()
		return fmt.Errorf("state database: %w", err)
	}
	c.tryLead(ctx, session) // a lone server leads from its start
	countServers(database, 1)
	now := time.Now()
	c.healthy.Store(&now)
	s.cluster = c
	run, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { c.live(run, s.db, session) })
	wg.Go(func() { s.housekeep(run) })
	c.stop = func() { stop(); wg.Wait() }
	return nil
}

// live keeps the replica alive every beat: its heartbeat, its session (opened again when its
// connection died) and, when free, the leader's lock. It closes the session when ctx ends.
// Why each beat's calls run to their end, bounded, rather than with ctx: a call cut short
// breaks its connection while the database may still run it — a heartbeat could then land
// after the stop forgot the row, and a session call leave the liveness lock held.
func (c *cluster) live(stop context.Context, db *store.DB, session *store.Session) {
	defer func() {
		if session != nil {
			session.Close()
		}
	}()
	t := time.NewTicker(c.beat)
	defer t.Stop()
	for {
		select {
		case <-stop.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(stop), beatCallTimeout)
		session = c.beatOnce(ctx, db, session)
		cancel()
	}
}

// beatOnce is one beat of live; it returns the session as it is after the beat (nil when it
// could not be opened again).
func (c *cluster) beatOnce(ctx context.Context, db *store.DB, session *store.Session) *store.Session {
	added, err := db.Heartbeat(ctx, c.self)
	switch {
	case err != nil:
		c.healthy.Store(nil)
	case c.healthy.Load() == nil:
		now := time.Now()
		c.healthy.Store(&now)
	}
	if added {
		c.noted.Clear() // a leader took this replica for dead and forgot its journal
	}
	if session != nil && session.Ping(ctx) != nil {
		session.Close() // its locks are gone with its connection: liveness and leadership
		session = nil
		c.leading.Store(false)
	}
	if session == nil {
		if session, err = db.OpenSession(ctx, c.self.ID); err != nil {
			return nil
		}
	}
	if !c.leading.Load() {
		c.tryLead(ctx, session)
	}
	return session
}

// tryLead takes the leader's lock on session if it is free.
func (c *cluster) tryLead(ctx context.Context, session *store.Session) {
	if lead, err := session.Lead(ctx); err == nil && lead {
		c.generation.Add(1)
		c.leading.Store(true)
	}
}

// leaveReplicas stops the replica's heartbeat and housekeeping (its session closes) and, the
// server being stopped cleanly (no call in flight), forgets its row and journal: nothing of
// it needs cleaning. Not while another server of this process on the same database is
// running (tests): the row is theirs too.
func (s *Service) leaveReplicas() {
	c := s.cluster
	if c == nil || c.left.Swap(true) {
		return
	}
	c.stop()
	if countServers(c.database, -1) > 0 {
		return // another server of this process on the database keeps the row alive
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.db.ForgetReplica(ctx, c.self.ID) // if it fails, the leader buries it
}

// judging reports whether the leader may take a silent replica for dead: its own heartbeats
// have succeeded for at least quiet.
func (c *cluster) judging() bool { return c.leading.Load() && c.healthyFor() }

// healthyFor reports whether the replica's own heartbeats have succeeded for at least quiet.
func (c *cluster) healthyFor() bool {
	h := c.healthy.Load()
	return h != nil && time.Since(*h) >= c.quiet
}

// Leading reports whether this server leads the replicas of its storage (the metrics); false
// with the SQLite state.
func (s *Service) Leading() bool { return s.cluster != nil && s.cluster.leading.Load() }

// housekeep is the replica's work every beat: the decrypted copies dead replicas left in its
// work_dir; and while it leads, once per leadership the start-up sweep of every zone, then
// the cleaning after dead replicas.
func (s *Service) housekeep(ctx context.Context) {
	c := s.cluster
	t := time.NewTicker(c.beat)
	defer t.Stop()
	var swept uint64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Every replica, leader or not: its work_dir may be its own (a container's emptyDir),
		// which no other replica sees; a start killed a moment ago is judged dead a few
		// beats later, not at this replica's next restart. Only once its own heartbeats
		// have succeeded for quiet, as the leader judges (after a database outage the
		// others get the time to take their liveness locks again).
		if c.healthyFor() && s.foreignStarts() {
			s.sweepWorkDirOf(s.staleTemp(ctx))
		}
		if !c.leading.Load() {
			continue
		}
		if g := c.generation.Load(); g != swept && s.sweepAll(ctx, false, s.staleTemp(ctx)) {
			swept = g
		}
		if c.judging() {
			s.buryDead(ctx)
		}
	}
}

// buryDead cleans up after every dead replica, then forgets it.
func (s *Service) buryDead(ctx context.Context) {
	c := s.cluster
	silent, err := s.db.Silent(ctx, c.quiet)
	if err != nil {
		return
	}
	for _, id := range silent {
		if id == c.self.ID {
			continue
		}
		if alive, err := s.db.Alive(ctx, id); err != nil || alive {
			continue
		}
		if s.cleanAfter(ctx, id) == nil {
			_ = s.db.ForgetReplica(ctx, id) // a failure forgets it at the next beat
		}
	}
}

// cleanAfter cleans up after the dead replica id: for each owner it wrote for, its temporary
// names in the owner's zones, what its killed writes left uncommitted in the owner's
// versioned space, and the owner's usage measured again (a reservation it never settled);
// then its decrypted working copies.
func (s *Service) cleanAfter(ctx context.Context, id string) error {
	owners, err := s.db.WrittenBy(ctx, id)
	if err != nil {
		return err
	}
	if err := s.recoverJournal(ctx, id); err != nil { // its changes' pending rows
		return err
	}
	stale := s.staleTemp(ctx)
	for _, o := range owners {
		if err := s.cleanOwner(ctx, id, o, stale); err != nil {
			return err
		}
	}
	s.sweepWorkDirOf(stale)
	return nil
}

// cleanOwner is cleanAfter for one owner, bounded by ownerCleanTimeout.
func (s *Service) cleanOwner(ctx context.Context, id string, o store.Owner, stale stale) error {
	ctx, cancel := context.WithTimeout(ctx, ownerCleanTimeout)
	defer cancel()
	for _, d := range s.sweepDirs(o) {
		s.sweepLeftovers(ctx, d, stale)
	}
	if err := s.recoverOwner(ctx, o, func(c store.Command) bool { return c.Replica == id }); err != nil {
		return err
	}
	_, _, err := s.Reconcile(ctx, o)
	return err
}

// recoverOwner commits what a killed write left uncommitted in o's versioned space (a user's
// Documents, a group's space), if it has a repository, after the guards of the commands
// that dead says died there (recover_commands.go).
func (s *Service) recoverOwner(ctx context.Context, o store.Owner, dead func(store.Command) bool) error {
	z := s.historyZone(o)
	if _, err := os.Stat(RepoDir(z.Space)); err != nil {
		return nil // never versioned: nothing to commit
	}
	fs, err := confine.New(DataDir(z.Space))
	if err != nil {
		return err
	}
	z.fs = fs
	defer z.Close()
	r, err := s.Repo(z)
	if err != nil {
		return err
	}
	defer r.Release()
	if err := s.commitLeftovers(ctx, r, z, func() bool { return false }, dead); err != nil {
		return err
	}
	s.recovery.done.Store(z.Space, struct{}{})
	return nil
}

// staleTemp is the sweeps' rule for the names of other processes. Among replicas a
// temporary name is a leftover when the replica it names is dead — neither seen within
// quiet (database time) nor holding its liveness lock — or when it is older than tempMaxAge
// (an older fileshed's names carry no id). Liveness is asked once per replica per sweep;
// when the database cannot tell, the name is kept. A server with the SQLite state is alone
// on its storage: a name older than the server is a dead process's.
func (s *Service) staleTemp(ctx context.Context) stale {
	c := s.cluster
	if c == nil {
		return func(_ string, mod time.Time) bool { return mod.Before(s.started) }
	}
	recent := map[string]bool{c.self.ID: true}
	rows, err := s.db.Replicas(ctx)
	silent, err2 := s.db.Silent(ctx, c.quiet)
	if err != nil || err2 != nil {
		return func(string, time.Time) bool { return false }
	}
	for _, r := range rows {
		recent[r.ID] = true
	}
	for _, id := range silent {
		delete(recent, id)
	}
	dead := map[string]bool{}
	now := s.fileNow()
	return func(id string, mod time.Time) bool {
		if !now.IsZero() && now.Sub(mod) > tempMaxAge {
			return true
		}
		if id == "" || recent[id] {
			return false
		}
		d, asked := dead[id]
		if !asked {
			alive, err := s.db.Alive(ctx, id)
			d = err == nil && !alive
			dead[id] = d
		}
		return d
	}
}

// fileNow is the file server's time now (zero when it cannot be read): the modification time
// of a file written for the purpose. Why not time.Now: on a shared volume file times come
// from the file server's clock, so an age is taken between two file times.
func (s *Service) fileNow() time.Time {
	p := s.Layout().Clock()
	if err := os.WriteFile(p, []byte(s.cluster.self.ID), 0o600); err != nil {
		return time.Time{}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// noteWriter records o in the journal of this replica before its first reservation for o
// (nothing with the SQLite state): if the replica dies with a reservation in flight, the
// leader measures o again.
func (s *Service) noteWriter(ctx context.Context, o store.Owner) error {
	c := s.cluster
	if c == nil {
		return nil
	}
	if _, ok := c.noted.Load(o); ok {
		return nil
	}
	if err := s.db.NoteWriter(ctx, c.self.ID, o); err != nil {
		return QuotaErr("Cannot record the quota reservation", err)
	}
	c.noted.Store(o, struct{}{})
	return nil
}
