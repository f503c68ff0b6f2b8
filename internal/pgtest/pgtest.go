package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// startTimeout bounds initdb plus the server's start (initdb takes about 5 s here).
const startTimeout = 2 * time.Minute

var (
	inMain  atomic.Bool // Run is running the tests
	once    sync.Once
	srv     *server
	skipMsg string // set when PostgreSQL is not installed
	srvErr  error  // set when it is installed but could not start
	dbSeq   atomic.Int64
)

// server is the private PostgreSQL of this test binary.
type server struct {
	dir   string // temporary folder: data/ and the unix socket
	bin   string // the PostgreSQL programs
	cred  *syscall.Credential
	flags []string // the server's extra flags
	port  int
	cmd   *exec.Cmd
	done  chan struct{} // closed when the server process has exited
	log   *tail
	admin *sql.DB // the postgres database, as superuser
	mu    sync.Mutex
	free  []string // emptied databases for the next tests (release)
}

// URL returns the URL of an empty database of t's own on the private server (started on
// first use); when t ends it is emptied and kept for another test (release). It skips t
// when PostgreSQL is not installed.
func URL(t testing.TB) string {
	t.Helper()
	if !inMain.Load() {
		// Without Run nothing would stop the server and remove its folder.
		t.Fatal("pgtest: run the package's tests with os.Exit(pgtest.Run(m)) in its TestMain")
	}
	once.Do(func() { srv, skipMsg, srvErr = start() })
	if skipMsg != "" {
		t.Skip(skipMsg)
	}
	if srvErr != nil {
		t.Fatalf("pgtest: %v", srvErr)
	}
	name, err := srv.database()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.release(name); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return srv.url(name)
}

// database returns an empty database: one a finished test gave back (release emptied it),
// or a new one. Why reuse: CREATE DATABASE copies the template (about 0.2 s of the server's
// CPU each), and a package's tests take hundreds.
func (s *server) database() (string, error) {
	s.mu.Lock()
	if n := len(s.free); n > 0 {
		name := s.free[n-1]
		s.free = s.free[:n-1]
		s.mu.Unlock()
		return name, nil
	}
	s.mu.Unlock()
	name := "test_" + strconv.FormatInt(dbSeq.Add(1), 10)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database: %w", err)
	}
	return name, nil
}

// release empties the database name and keeps it for the next test: every session on it is
// ended, and waited for (a session's advisory locks last until its backend is gone), and
// every schema a test made goes, the public one made anew. A database that cannot be
// emptied so is dropped instead.
func (s *server) release(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.empty(ctx, name)
	if err == nil {
		s.mu.Lock()
		s.free = append(s.free, name)
		s.mu.Unlock()
		return nil
	}
	// FORCE: a connection the test leaked must not keep the database alive.
	if _, err := s.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database: %w", err)
	}
	return nil
}

// empty ends the sessions on database name and drops what the test made in it.
func (s *server) empty(ctx context.Context, name string) error {
	const others = `FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`
	if _, err := s.admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid) `+others, name); err != nil {
		return err
	}
	for {
		var n int
		if err := s.admin.QueryRowContext(ctx, `SELECT count(*) `+others, name).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	db, err := sql.Open("pgx", s.url(name))
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT nspname FROM pg_namespace
		WHERE nspname NOT LIKE 'pg\_%' AND nspname <> 'information_schema'`)
	if err != nil {
		return err
	}
	var schemas []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		schemas = append(schemas, `"`+strings.ReplaceAll(n, `"`, `""`)+`"`)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// The public schema as a new database has it (PostgreSQL 15: the database owner's, USAGE
	// for everyone).
	stmts := []string{"CREATE SCHEMA public AUTHORIZATION pg_database_owner", "GRANT USAGE ON SCHEMA public TO PUBLIC"}
	if len(schemas) > 0 {
		stmts = append([]string{"DROP SCHEMA " + strings.Join(schemas, ", ") + " CASCADE"}, stmts...)
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// Run runs the tests of a package and then stops the private server if one was started; it
// returns the exit code for os.Exit (1 if the tests passed but the server would not stop).
// Call it from TestMain in place of m.Run.
func Run(m *testing.M) int {
	inMain.Store(true)
	code := m.Run()
	if srv != nil {
		if err := srv.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// url is the URL of database name: the unix socket in the server's folder, as superuser.
func (s *server) url(name string) string {
	q := url.Values{"host": {s.dir}, "port": {strconv.Itoa(s.port)}, "sslmode": {"disable"}}
	return "postgres://postgres@/" + name + "?" + q.Encode()
}

// binDir finds the PostgreSQL programs: the newest Debian /usr/lib/postgresql/N/bin, else
// initdb on PATH.
func binDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(d string) int { n, _ := strconv.Atoi(filepath.Base(filepath.Dir(d))); return n }
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// Installed reports whether PostgreSQL is installed here (URL skips its test otherwise): a
// check over the whole suite (the handlers' error catalogue) leaves out what only
// PostgreSQL can provoke when it is not.
func Installed() bool { return binDir() != "" }

// start creates and starts the private server. It returns a skip message when PostgreSQL
// is not installed.
func start() (*server, string, error) { return startWith(durability()) }

// startWith creates a server in a new temporary folder and starts it with the extra flags.
func startWith(flags []string) (*server, string, error) {
	bin := binDir()
	if bin == "" {
		return nil, "PostgreSQL is not installed: apt-get install postgresql (CI installs it; the tests start their own server)", nil
	}
	// Why another user when root: PostgreSQL refuses to run as root.
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, "", fmt.Errorf("running as root needs the postgres user (the Debian package postgresql creates it): %w", err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	}
	dir, err := os.MkdirTemp("", "fileshed-pgtest-")
	if err != nil {
		return nil, "", err
	}
	s := &server{dir: dir, bin: bin, cred: cred, flags: flags}
	fail := func(err error) (*server, string, error) {
		os.RemoveAll(dir)
		return nil, "", err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres",
		"-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w\n%s", err, out))
	}
	if s.port, err = freePort(); err != nil {
		return fail(err)
	}
	if err := s.launch(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	return s, "", nil
}

// launch starts the postgres process on the server's data folder and waits until it
// answers (after a crash, once its recovery is done).
func (s *server) launch(ctx context.Context) error {
	s.done, s.log = make(chan struct{}), &tail{}
	// Why no TCP listener: trust authentication lets whoever connects be superuser; the
	// socket in the private folder is reachable by this user (and root) only.
	s.cmd = exec.Command(filepath.Join(s.bin, "postgres"), append([]string{"-D", filepath.Join(s.dir, "data"), "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=", "-c", "unix_socket_permissions=0700",
		"-c", "max_connections=300", "-c", "shared_buffers=32MB", "-c", "log_min_messages=warning"}, s.flags...)...)
	s.cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	// Why Pdeathsig: a test binary that dies (a timeout panic, a kill) must not leave a
	// server running; SIGQUIT is PostgreSQL's immediate shutdown.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGQUIT}
	started := make(chan error, 1)
	done := s.done
	go func() {
		// Why a locked thread: Pdeathsig fires when the thread that started the child
		// exits, and the runtime may end threads; this one lives as long as the server.
		runtime.LockOSThread()
		if err := s.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = s.cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	var err error
	if s.admin, err = sql.Open("pgx", s.url("postgres")); err != nil {
		s.stop()
		return err
	}
	for {
		err := s.admin.PingContext(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-done:
			s.stop()
			return fmt.Errorf("postgres exited at start:\n%s", s.log)
		case <-ctx.Done():
			s.stop()
			return fmt.Errorf("postgres did not answer within %v: %v\n%s", startTimeout, err, s.log)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Durable is the environment variable that, set to 1, runs the private server with
// PostgreSQL's own defaults (fsync, synchronous_commit and full_page_writes on: every commit
// waits for its WAL on disk), as a production server runs: for benchmarks that compare the
// state drivers. Tests leave it unset and get a server that never waits for the disk.
const Durable = "FILESHED_PGTEST_DURABLE"

// durability is the server's flags for Durable.
func durability() []string {
	if os.Getenv(Durable) == "1" {
		return nil
	}
	return []string{"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"}
}

// stop shuts the server down (fast shutdown: open connections are ended) and removes its
// folder.
func (s *server) stop() error {
	err := s.halt(syscall.SIGINT)
	if rmErr := os.RemoveAll(s.dir); rmErr != nil && err == nil {
		err = rmErr
	}
	return err
}

// halt sends sig to the postmaster (SIGINT: fast shutdown; SIGQUIT: immediate, what pg_ctl
// -m immediate sends) and waits for it to exit.
func (s *server) halt(sig syscall.Signal) error {
	if s.admin != nil {
		s.admin.Close()
		s.admin = nil
	}
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
		return nil
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return errors.New("postgres did not stop within 30s: killed")
	}
}

// freePort is a TCP port nothing listens on now. The server listens on no TCP port, but
// the number names its socket and seeds its shared-memory keys.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail keeps the last 64 KiB written to it: the server's log, shown when it fails.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - 64<<10; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
