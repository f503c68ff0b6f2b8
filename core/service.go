package core

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/lock/pglock"
	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/sandbox"
	"github.com/fileshed/fileshed/core/sqlq"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/valves"
)

// Service is the facade handlers call: one method per tool, each taking the Caller explicitly.
type Service struct {
	cfg   *valves.Config
	base  string
	db    *store.DB
	owui  *owui.Client
	quota quota
	repos repos
	// plain are the unversioned spaces' states shared with a command running there (plain.go).
	plain plainSpaces
	// locks is the one seam of every cross-request exclusion (locks.go, DESIGN §9).
	locks lock.Locker
	// started tells the leftovers of interrupted writes (older) from running writes;
	// sweep stops the background sweep of those leftovers (sweep.go) and waits for it.
	started time.Time
	sweep   func()
	// cluster is this server's life among the replicas of its storage (replicas.go); nil
	// with the SQLite state.
	cluster *cluster
	// storageLock is the storage directory's lock, held exclusively while serving (admin.go).
	storageLock *StorageLock
	audit       auditor
	// slots bounds the commands running at once (budget.go).
	slots slots
	// running counts the commands running now (RunningCommands).
	running atomic.Int64
	// draining is set when the server begins to shut down (readiness turns off).
	draining atomic.Bool
	// timings receives operation durations (SetTimings; the metrics).
	timings atomic.Pointer[Timings]
	// recovery commits what an unclean stop left uncommitted (recover.go).
	recovery recovery
	// keys are the master key and the users' unwrapped data keys (encryption at rest).
	keys *keyring
	// seen remembers what was last recorded of each user's groups (members.go).
	seen seenCache
	// journal is the change journal's memory of its prunes (journal_evict.go).
	journal journalState
	// startTag names this start's folder of decrypted copies (startDir).
	startTag string
}

// Options carries the collaborators main wires in.
type Options struct {
	// OpenWebUI is the client used on the caller's behalf (groups, uploads); nil when no
	// Open WebUI URL is configured.
	OpenWebUI *owui.Client
	// Admin opens the storage for an operator (`fileshed admin`) beside a server that may
	// be running: no crash-leftover sweep (the server's writes in flight would look like
	// leftovers) and no shared storage lock (admin.go).
	Admin bool
}

// Result is what a successful operation answers: the data object and a short message.
type Result struct {
	Data    any
	Message string
}

// New prepares the storage directory and the state database. It fails fast when the
// storage cannot be created or written.
func New(cfg *valves.Config, opt Options) (*Service, error) {
	base, err := filepath.Abs(cfg.StorageBasePath)
	if err != nil {
		return nil, fmt.Errorf("storage_base_path: %w", err)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("storage_base_path: cannot create %s: %w", base, err)
	}
	// The lock before anything else: a second server must not touch a live server's state.
	var lock *StorageLock
	if !opt.Admin {
		who := holderServer
		if cfg.State.Driver == store.Postgres {
			who = holderReplica
		}
		if lock, err = lockStorage(base, who); err != nil {
			return nil, fmt.Errorf("storage_base_path: %w", err)
		}
	}
	var s *Service
	if err = ImportInterrupted(base); err == nil { // before open creates anything
		s, err = openState(cfg, opt, base)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		return nil, err
	}
	s.storageLock = lock
	s.startAudit()
	switch {
	case opt.Admin:
	case cfg.State.Driver == store.Postgres:
		// Among replicas: the leader sweeps, and only what dead replicas left (replicas.go).
		if err := s.startReplica(cfg.State.URL); err != nil {
			s.Close()
			return nil, err
		}
		s.sweepWorkDirOf(s.staleTemp(context.Background()))
	default:
		s.sweepWorkDirOf(func(string, time.Time) bool { return true }) // decrypted copies a crash left behind
		s.startSweep()
	}
	return s, nil
}

// openState opens the state database the storage's record names (state_record.go), and
// checks the settings every server of it must share (a server only).
func openState(cfg *valves.Config, opt Options, base string) (*Service, error) {
	rec, recorded, err := checkRecordBefore(cfg, base)
	if err != nil {
		return nil, err
	}
	s, err := open(cfg, opt, base)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err = s.checkRecordAfter(ctx, rec, recorded, !opt.Admin); err == nil && !opt.Admin {
		err = s.checkFingerprints(ctx)
	}
	if err != nil {
		s.db.Close()
		if l, ok := s.locks.(io.Closer); ok {
			l.Close()
		}
		return nil, err
	}
	return s, nil
}

// open creates the zones' parents and opens the state database.
func open(cfg *valves.Config, opt Options, base string) (*Service, error) {
	for _, d := range []string{LayoutOf(base).Owners("user"), LayoutOf(base).Owners("group")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("storage_base_path: cannot create %s: %w", d, err)
		}
	}
	// Before the first SQLite connection: every connection's heap is bounded (sqlq/heap.go).
	if err := sqlq.SetConnMemory(int64(cfg.SQLiteMemoryMB) << 20); err != nil {
		return nil, fmt.Errorf("sqlite_memory_mb: %w", err)
	}
	db, err := store.OpenSource(StateSource(cfg, base))
	if err != nil {
		return nil, fmt.Errorf("state database: %w", err)
	}
	locks, err := newLocker(cfg)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Service{cfg: cfg, base: base, db: db, owui: opt.OpenWebUI, locks: locks, started: time.Now(),
		sweep: func() {}, keys: newKeyring(cfg.Encryption.MasterKey), startTag: randomID()}, nil
}

// newLocker is the Locker of every lock the kernel takes: the in-process one with the SQLite
// state (one server), PostgreSQL advisory locks with the postgres state, which every replica
// on the storage shares (an operator's command beside them too). The repository flock stays
// an inner guard of one host, never the authority.
func newLocker(cfg *valves.Config) (lock.Locker, error) {
	if cfg.State.Driver != store.Postgres || inProcessLocksOnly {
		return lock.NewLocal(), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := pglock.Open(ctx, cfg.State.URL, pglock.Options{Conns: cfg.State.LockConnections})
	if err != nil {
		return nil, fmt.Errorf("state database: %w", err)
	}
	return l, nil
}

// LockStats is the PostgreSQL Locker's pool and lost leases (zero with the in-process one),
// for the metrics.
func (s *Service) LockStats() pglock.Stats {
	if l, ok := s.locks.(*pglock.Locker); ok {
		return l.Stats()
	}
	return pglock.Stats{}
}

// StateSource is where cfg keeps the state database: fileshed.sqlite in the storage
// directory base, or the PostgreSQL database of state.url.
func StateSource(cfg *valves.Config, base string) store.Source {
	return store.Source{Driver: cfg.State.Driver, Path: LayoutOf(base).StateFile(), URL: cfg.State.URL}
}

// Close flushes the audit trail and releases the repositories and the state database.
func (s *Service) Close() error {
	s.sweep()
	s.leaveReplicas()
	_ = os.RemoveAll(s.startDir()) // no call in flight: its decrypted copies are done
	s.stopAudit()
	s.closeRepos()
	s.closeAreas()
	if l, ok := s.locks.(io.Closer); ok {
		l.Close()
	}
	err := s.db.Close()
	if s.storageLock != nil {
		s.storageLock.Close()
	}
	return err
}

// RunningCommands is how many commands (shed_exec, shed_lockedit_exec, PDF reading) run now.
func (s *Service) RunningCommands() int64 { return s.running.Load() }

// RunSandboxed runs spec in the sandbox, counted in RunningCommands while it runs.
func (s *Service) RunSandboxed(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error) {
	s.running.Add(1)
	defer s.running.Add(-1)
	return sandbox.Run(ctx, spec)
}

// EncryptionAvailable reports whether the server has a master key (encryption at rest can
// be set up).
func (s *Service) EncryptionAvailable() bool { return s.keys.master != nil }

// DB is the state database (ownership, locks, links, usage, audit, keys).
func (s *Service) DB() *store.DB { return s.db }

// Base is the absolute storage directory.
func (s *Service) Base() string { return s.base }

// OpenWebUI is the Open WebUI client, nil when no openwebui.url is configured.
func (s *Service) OpenWebUI() *owui.Client { return s.owui }

// Config returns the effective configuration (read-only by convention).
func (s *Service) Config() *valves.Config { return s.cfg }
