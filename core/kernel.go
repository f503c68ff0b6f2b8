package core

import (
	"context"
	"io"
	"time"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/crypt"
	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/sandbox"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/valves"
)

// Kernel is what a tool family holds of the kernel (issue 35, STYLE "a family holds the
// kernel; it does not embed it"): the zones, the write transaction (Begin, BeginWrite,
// RunCopy) and the queries the families need, and nothing else of the Service. The Service
// under it cannot be reached from outside core (the field is unexported), so a family
// cannot take a lock, commit or reserve beyond what is listed here. Every family holds it
// (commands, sqlite and encryption since their write protocols are the kernel's).
type Kernel struct{ kernel }

// Kernel is the handle of s that the families hold.
func (s *Service) Kernel() Kernel { return Kernel{s} }

// kernel is the method set of Kernel: *Service's methods, listed by what a family needs.
// Every method added here widens every family: prefer a query that answers what the
// family asks over a mechanism.
type kernel interface {
	// The configuration and the collaborators.
	Config() *valves.Config
	Layout() Layout
	OpenWebUI() *owui.Client
	Audit(c Caller, tool, zone, path, outcome string)
	LockMaxAge() time.Duration

	// Zones, reads and the limits of a call.
	ResolveZone(ctx context.Context, c Caller, zone, group string, write bool) (*Zone, error)
	ZonePath(ctx context.Context, c Caller, args ZoneArgs, p string, write bool) (*Zone, string, error)
	OpenRead(ctx context.Context, c Caller, za ZoneArgs, p string, isDir func(*Zone, string) error) (*Opened, error)
	AcquireSlot(ctx context.Context, user string, kind slotKind) (release func(), err error)
	OwnerTurn(ctx context.Context, z *Zone, kind slotKind) (release func(), err error)
	RunSandboxed(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error)
	CheckSize(size int64) error
	CheckGroupWrite(ctx context.Context, c Caller, z *Zone, kind writeKind, rel string) error
	GroupMode(mode string) (string, error)
	FileLocked(z *Zone, p string, l store.Lock) *Error
	EditLocks(z *Zone) EditLocks

	// The write transaction and the copy.
	Begin(ctx context.Context, c Caller, e Edit) (*Tx, error)
	BeginWrite(ctx context.Context, c Caller, z *Zone, rel, shown string, e Edit) (*Tx, Target, error)
	PlanCopy(job *CopyJob, srcRel, dstRel, shownSrc string) error
	RunCopy(ctx context.Context, c Caller, job *CopyJob, tool, message string) (string, int64, error)
	ChangeRecord(ctx context.Context, c Caller, z *Zone, rel, what string, change func(o *store.Ownership) error) (store.Ownership, error)

	// Editzones and working copies (shed_lockedit).
	Editzone(z *Zone, conv string) (*confine.Fs, error)
	LockEdit(ctx context.Context, z *Zone, p string) (func(), error)
	EditLease(ctx context.Context, z *Zone, p string) (lock.Lease, error)
	WriteWorkingCopy(ctx context.Context, z *Zone, ez *confine.Fs, p string, size int64, r io.Reader, appendTo bool) (int64, error)
	DropWorkingCopy(ctx context.Context, z *Zone, ez *confine.Fs, p string)
	BoxWorkingCopy(ctx context.Context, z *Zone, ez *confine.Fs, p string) (*WorkBox, error)
	SweepEditzones(ctx context.Context, z *Zone) ([]string, error)
	OpenMirror(src ReadFs, names []string) (*Mirror, error)
	OpenMirrorWithin(ctx context.Context, src ReadFs, names []string) (*Mirror, error)

	// The extracted-text cache (shed_search's PDF texts, in the working folder).
	CachedText(key string) ([]byte, bool)
	CacheText(key string, text []byte)

	// The change journal (shed_version changes, undo, review).
	Changes(ctx context.Context, c Caller, q ChangesQuery) ([]ChangeInfo, int, error)
	ChangeDiff(ctx context.Context, c Caller, id int64) (Diff, error)
	Undo(ctx context.Context, c Caller, changeID int64, conversation string, force bool) (UndoResult, error)

	// Versioning (shed_restore, shed_maintenance).
	Repo(z *Zone) (*OpenRepo, error)
	CheckRepo(ctx context.Context, c Caller, z *Zone) (RepoCheck, bool)

	// The command protocol, SQLite and encryption (commands, sqlite, encryption).
	Base() string
	BeginCommand(ctx context.Context, c Caller, z *Zone, cmd Command) (cx *CommandTx, err error)
	BeginMirror(ctx context.Context, c Caller, z *Zone) (*CommandMirror, error)
	CheckWrite(ctx context.Context, c Caller, z *Zone, rel, shown string, e Edit) error
	EncryptionAvailable() bool
	FlushIndex(ctx context.Context, z *Zone) error
	ForgetUserKey(userID string)
	HoldDatabase(ctx context.Context, c Caller, z *Zone, rel, shown string) (func(), error)
	HoldKeyChange(ctx context.Context, userID string) (func(), error)
	NewUserKey(ctx context.Context, userID string) (bool, error)
	NewWorkFile(name string) (*WorkFile, error)
	RemainingQuota(ctx context.Context, z *Zone) (Amount, error)
	SandboxStatus() map[string]any
	SealWalk(ctx context.Context, c Caller, key *crypt.Key, op SealOp) (Sealed, error)
	UserKey(ctx context.Context, userID string) UserKey
	// Usage, groups and the state database.
	Limit(o store.Owner) Amount
	UsageOf(ctx context.Context, o store.Owner) (used, limit Amount, err error)
	DirUsage(ctx context.Context, o store.Owner, dir string) (ZoneUsage, error)
	HistoryBytes(ctx context.Context, o store.Owner) (int64, error)
	Reconcile(ctx context.Context, o store.Owner) (Amount, []string, error)
	KnownGroup(id string) Group
	Memberships(ctx context.Context, c Caller) (groups []Group, available bool, err error)
	MemberStateOf(ctx context.Context, g Group, userID string) (MemberState, error)
	Roster(ctx context.Context, g Group, limit int) (Roster, error)
	State() StateQueries
}
