package sandbox

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The kernel layer without the policy: commands the policy would never let
// through (sh, setsid, mkfifo, chmod, bash) show what the launcher itself
// guarantees, in each mode.

var kernelModes = []Mode{ModeBestEffort, ModeOff}

// runRaw runs argv in dir in mode m, allowing the helpers to be executed.
func runRaw(t *testing.T, dir string, m Mode, network bool, timeout time.Duration, helpers []string, argv ...string) Result {
	t.Helper()
	s := spec(dir, argv...)
	s.Mode, s.Network, s.Exec = m, network, helpers
	if timeout > 0 {
		s.Timeout = timeout
	}
	res, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func need(t *testing.T, bins ...string) {
	t.Helper()
	for _, b := range bins {
		if _, err := os.Stat(b); err != nil {
			t.Skipf("%s is not installed (Debian: coreutils/bash/util-linux/curl)", b)
		}
	}
}

// TestNothingSurvivesTheCall: a setsid + double-fork daemon started by the command
// is gone when Run returns, whether the command ended by itself or timed out.
func TestNothingSurvivesTheCall(t *testing.T) {
	t.Parallel()
	need(t, "/bin/sh", "/usr/bin/setsid", "/usr/bin/sleep")
	helpers := []string{"/bin/sh", "/usr/bin/setsid", "/usr/bin/sleep"}
	for i, m := range kernelModes {
		for j, how := range []string{"exits", "times out"} {
			t.Run(fmt.Sprintf("%s/%s", m, how), func(t *testing.T) {
				t.Parallel() // each its own zone and its own sleep argument (the last digit)
				arg := fmt.Sprintf("53.%06d%d", time.Now().UnixNano()%1_000_000, 2*i+j)
				script := fmt.Sprintf(`setsid sh -c 'sleep %s & sleep %s & exit 0' & sleep 0.3`, arg, arg)
				timeout := 20 * time.Second
				if how == "times out" {
					script += "; sleep 30"
					timeout = time.Second
				}
				start := time.Now()
				res := runRaw(t, zone(t), m, false, timeout, helpers, "/bin/sh", "-c", script)
				if res.TimedOut != (how == "times out") {
					t.Fatalf("timed out %v: %+v", res.TimedOut, res)
				}
				if time.Since(start) > 10*time.Second {
					t.Fatalf("Run took %v", time.Since(start))
				}
				if sleeping(t, arg) {
					t.Fatal("a daemon started by the command outlived the call")
				}
			})
		}
	}
}

// TestNetworkOffMeansOff: with the network off no socket of any family leaves the
// command: no UDP datagram (Landlock below ABI 10 does not cover UDP), no connect
// to a host UNIX socket. With it on, a UNIX socket is still refused.
func TestNetworkOffMeansOff(t *testing.T) {
	t.Parallel()
	need(t, "/usr/bin/bash", "/usr/bin/curl")
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	sockDir := t.TempDir()
	sock := filepath.Join(sockDir, "host.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := udp.LocalAddr().(*net.UDPAddr).Port
	for _, m := range kernelModes {
		t.Run(string(m)+"/udp", func(t *testing.T) {
			res := runRaw(t, zone(t), m, false, 0, nil, "/usr/bin/bash", "-c", fmt.Sprintf("echo leak > /dev/udp/127.0.0.1/%d", port))
			if res.ExitCode == 0 {
				t.Fatalf("the datagram was sent: %+v", res)
			}
			udp.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if n, _, err := udp.ReadFrom(make([]byte, 64)); err == nil {
				t.Fatalf("received %d bytes", n)
			}
		})
		for _, network := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/unix-socket/network=%v", m, network), func(t *testing.T) {
				res := runRaw(t, zone(t), m, network, 0, nil, "/usr/bin/curl", "-sS", "--unix-socket", sock, "-o", "out", "http://x/")
				if res.ExitCode == 0 {
					t.Fatalf("connected: %+v", res)
				}
				select {
				case <-accepted:
					t.Fatal("the host UNIX socket accepted a connection from the command")
				case <-time.After(100 * time.Millisecond):
				}
			})
		}
	}
}

// TestNoSpecialFilesOrSetIDBits: no FIFO, device node or socket file and no
// set-user-id, set-group-id or sticky bit can be created in a zone, with or without
// Landlock (the seccomp filter holds in every mode).
func TestNoSpecialFilesOrSetIDBits(t *testing.T) {
	t.Parallel()
	need(t, "/usr/bin/mkfifo", "/usr/bin/mknod", "/usr/bin/chmod", "/usr/bin/install", "/usr/bin/cp", "/usr/bin/mkdir")
	for _, m := range kernelModes {
		t.Run(string(m), func(t *testing.T) {
			d := zone(t)
			if err := os.Mkdir(filepath.Join(d, "dir"), 0o700); err != nil {
				t.Fatal(err)
			}
			// A set-user-id source made by the server itself (as if restored from elsewhere).
			src := filepath.Join(d, "suid")
			write(t, src, "x")
			if err := os.Chmod(src, 0o4755); err != nil {
				t.Fatal(err)
			}
			runs := [][]string{
				{"/usr/bin/mkfifo", "fifo"},
				{"/usr/bin/mknod", "dev", "c", "1", "3"},
				{"/usr/bin/chmod", "u+s", "a.txt"},
				{"/usr/bin/chmod", "2755", "dir"},
				{"/usr/bin/chmod", "+t", "dir"},
				{"/usr/bin/install", "-m", "4755", "a.txt", "inst"},
				{"/usr/bin/cp", "--preserve=mode", "suid", "copy"},
				{"/usr/bin/mkdir", "-m", "1777", "sticky"},
			}
			for _, argv := range runs {
				res := runRaw(t, d, m, false, 0, nil, argv...)
				if res.ExitCode == 0 && argv[0] != "/usr/bin/install" && argv[0] != "/usr/bin/cp" {
					t.Errorf("%v succeeded: %+v", argv, res)
				}
			}
			for _, name := range []string{"fifo", "dev"} {
				if _, err := os.Lstat(filepath.Join(d, name)); err == nil {
					t.Errorf("%s was created", name)
				}
			}
			for _, name := range []string{"a.txt", "dir", "inst", "copy", "sticky"} {
				fi, err := os.Lstat(filepath.Join(d, name))
				if err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 {
					t.Errorf("%s has mode %v", name, fi.Mode())
				}
			}
		})
	}
}

// TestInheritedDescriptorsAreClosed: a descriptor the server holds without
// close-on-exec (inherited from a shell or a supervisor) never reaches the command.
func TestInheritedDescriptorsAreClosed(t *testing.T) {
	need(t, "/usr/bin/ls")
	d := zone(t)
	fd, err := unix.Open(filepath.Join(d, "a.txt"), unix.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	const leaked = 77
	if err := unix.Dup2(fd, leaked); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(leaked)
	res := runRaw(t, d, ModeOff, false, 0, nil, "/usr/bin/ls", "/proc/self/fd")
	fds := strings.Fields(res.Stdout)
	if res.ExitCode != 0 || len(fds) == 0 {
		t.Fatalf("%+v", res)
	}
	for _, f := range fds {
		if f != "0" && f != "1" && f != "2" && f != "3" { // 3: ls's own directory
			t.Fatalf("the command sees descriptors %v", fds)
		}
	}
}

// TestHomeIsOutsideTheZone: HOME and the XDG directories name no zone and no host
// path, and Python tools run without user site-packages.
func TestHomeIsOutsideTheZone(t *testing.T) {
	t.Parallel()
	need(t, "/usr/bin/env")
	d := zone(t)
	res := runRaw(t, d, ModeBestEffort, false, 0, nil, "/usr/bin/env")
	if strings.Contains(res.Stdout, d) {
		t.Fatalf("host path in the environment: %s", res.Stdout)
	}
	for _, want := range []string{"HOME=" + HomeDir, "XDG_CONFIG_HOME=" + HomeDir, "PYTHONNOUSERSITE=1"} {
		if !strings.Contains(res.Stdout, want+"\n") {
			t.Errorf("missing %s in %s", want, res.Stdout)
		}
	}
}

// TestNetworkOnAllowsTCP: with the network on, curl still resolves and connects
// (the seccomp filter leaves AF_INET/AF_INET6; glibc copes without netlink and
// nscd); with it off, it cannot.
func TestNetworkOnAllowsTCP(t *testing.T) {
	t.Parallel()
	need(t, "/usr/bin/curl")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("pong")) }))
	defer srv.Close()
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	for _, m := range kernelModes {
		for _, network := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/network=%v", m, network), func(t *testing.T) {
				d := zone(t)
				res := runRaw(t, d, m, network, 0, nil, "/usr/bin/curl", "-sS", "-o", "out", url)
				b, _ := os.ReadFile(filepath.Join(d, "out"))
				if got := res.ExitCode == 0 && string(b) == "pong"; got != network {
					t.Fatalf("fetched=%v with network=%v: %+v", got, network, res)
				}
			})
		}
	}
}

// TestCommandCannotKillTheLauncher: the launcher must outlive the command to clean
// up after it, so the command cannot signal it (its pid or its process group), with
// or without Landlock; a daemon started before the attempt is still reaped.
func TestCommandCannotKillTheLauncher(t *testing.T) {
	t.Parallel()
	need(t, "/bin/sh", "/usr/bin/setsid", "/usr/bin/sleep")
	helpers := []string{"/bin/sh", "/usr/bin/setsid", "/usr/bin/sleep"}
	for _, m := range kernelModes {
		t.Run(string(m), func(t *testing.T) {
			arg := fmt.Sprintf("59.%06d", time.Now().UnixNano()%1_000_000)
			script := fmt.Sprintf(`setsid sleep %s & kill -9 $PPID || echo refused-ppid; kill -9 0 || echo refused-group; exit 3`, arg)
			res := runRaw(t, zone(t), m, false, 10*time.Second, helpers, "/bin/sh", "-c", script)
			if res.ExitCode != 3 || !strings.Contains(res.Stdout, "refused-ppid") || !strings.Contains(res.Stdout, "refused-group") {
				t.Fatalf("%+v", res)
			}
			if sleeping(t, arg) {
				t.Fatal("the daemon outlived the call")
			}
		})
	}
}
