// Package replicatest runs fileshed server processes for tests and benchmarks: the binary
// built beside its small launcher (as the image lays it out), replicas started on free
// loopback addresses and waited for, killed with SIGKILL and restarted. The end-to-end test
// of several replicas and bench/replicas use it.
//
// It is test support only: no production package may import it.
package replicatest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fileshed/fileshed/internal/testtool"
)

// Build builds the server into dir/fileshed and its launcher into dir/fileshed-sandbox,
// with the given build tags, and returns the server's path.
func Build(dir string, tags ...string) (string, error) {
	bin := filepath.Join(dir, "fileshed")
	for pkg, out := range map[string]string{"github.com/fileshed/fileshed": bin, "github.com/fileshed/fileshed/cmd/fileshed-sandbox": filepath.Join(dir, "fileshed-sandbox")} {
		args := []string{"build", "-o", out}
		for _, t := range tags {
			args = append(args, "-tags", t)
		}
		if b, err := exec.Command("go", append(args, pkg)...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
		}
	}
	return bin, nil
}

// Replica is one server process, restartable on the same address.
type Replica struct {
	// Bin is the server binary, Addr its listen address, Env its FILESHED_* variables (on
	// top of the caller's environment).
	Bin, Addr string
	Env       []string
	cmd       *exec.Cmd
	logs      *testtool.Buffer
	exited    chan struct{}
}

// New is a replica of bin on a free loopback address, not started.
func New(t testing.TB, bin string, env ...string) *Replica {
	return &Replica{Bin: bin, Addr: FreeAddr(t), Env: env}
}

// URL is the replica's base URL.
func (r *Replica) URL() string { return "http://" + r.Addr }

// Logs is what the replica's current process wrote to stderr.
func (r *Replica) Logs() string { return r.logs.String() }

// Start runs the replica and waits for its /healthz; the process is killed when t ends.
func (r *Replica) Start(t testing.TB) {
	t.Helper()
	r.cmd = exec.Command(r.Bin)
	r.cmd.Env = append(os.Environ(), append(r.Env, "FILESHED_LISTEN="+r.Addr)...)
	r.logs, r.exited = &testtool.Buffer{}, make(chan struct{})
	r.cmd.Stderr = r.logs
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd, exited := r.cmd, r.exited
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(r.URL() + "/healthz"); err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("replica %s exited at start:\n%s", r.Addr, r.logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s did not start:\n%s", r.Addr, r.logs)
		}
	}
}

// Kill stops the replica with SIGKILL and waits for it to be gone.
func (r *Replica) Kill() {
	r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.exited
}

// FreeAddr is a free loopback address.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
