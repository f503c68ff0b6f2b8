// Command fileshed is an OpenAPI tool server that gives Open WebUI users a persistent,
// sandboxed file workshop. Wiring only: load valves -> the kernel (core.New) and its tool
// families (tools.Open) -> handlers.New -> serve.
//
//	fileshed [flags]            serve (default)
//	fileshed version            print the version and commit (build information or -X main.commit)
//	fileshed help               print the usage
//	fileshed healthcheck        probe GET /healthz of the configured listen address (--ready: /readyz)
//	fileshed openapi            print the OpenAPI 3.1 document
//	fileshed valves [--env]     print the effective configuration (secrets redacted): each valve's
//	                            source, variable and flag, or (--env) as FILESHED_* lines
//	fileshed admin ...          operator commands (quota, locks, audit, sandbox ls, backup, restore, verify, import-original)
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"syscall"
	"time"

	"github.com/fileshed/fileshed/admin"
	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/sandbox/launch"
	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
	"github.com/fileshed/fileshed/tools"
)

//go:embed valves.yaml
var defaultValves []byte

// commit is the source commit when the build names it: go build -ldflags "-X main.commit=..."
// (the Dockerfile's COMMIT argument: an image build has no .git for Go to stamp).
var commit string

func main() {
	// The command launcher (core/sandbox) re-executes this binary: dispatch it before any
	// configuration, logging or storage work.
	if len(os.Args) > 1 && os.Args[1] == launch.Arg {
		os.Exit(launch.Main(os.Args[2:]))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	for _, a := range args {
		if cmd == "admin" {
			break // admin has its own --help
		}
		switch a {
		case "-h", "-help", "--help":
			cmd = "help"
		case "--version":
			cmd = "version"
		}
	}
	switch cmd {
	case "help":
		fmt.Fprint(stdout, usageText)
		return 0
	case "version":
		fmt.Fprintln(stdout, versionText())
		return 0
	}
	if cmd == "admin" {
		// The admin commands parse their own flags; valves come from the environment
		// (FILESHED_*, FILESHED_CONFIG) and --storage-base-path.
		cfg, _, err := configure(nil)
		if err != nil {
			fmt.Fprintln(stderr, "fileshed: configuration: "+err.Error())
			return 2
		}
		return admin.Run(cfg, args, stdout, stderr)
	}
	asEnv, args := ownFlag(cmd == "valves", args, "--env")
	ready, args := ownFlag(cmd == "healthcheck", args, "--ready")
	cfg, src, err := configure(args)
	if err != nil {
		fmt.Fprintln(stderr, "fileshed: configuration: "+err.Error())
		return 2
	}
	switch cmd {
	case "serve":
		err = serve(cfg, stderr)
	case "healthcheck":
		err = healthcheck(cfg, ready)
	case "openapi":
		err = printSpec(cfg, stdout)
	case "valves":
		for _, w := range cfg.Warnings(os.Environ()) {
			fmt.Fprintln(stderr, "fileshed: warning: "+w)
		}
		if asEnv {
			err = cfg.ReportEnv(stdout)
		} else {
			err = cfg.Report(stdout, src)
		}
	default:
		err = fmt.Errorf("unknown command %q (serve, version, help, healthcheck, openapi, valves, admin)", cmd)
	}
	if err != nil {
		fmt.Fprintln(stderr, "fileshed:", err)
		return 1
	}
	return 0
}

// ownFlag takes a command's own boolean flag (valves --env) out of args, which are
// otherwise valve flags; when the command is not the flag's (ok false), args stay as they are.
func ownFlag(ok bool, args []string, flag string) (bool, []string) {
	if !ok || !slices.Contains(args, flag) {
		return false, args
	}
	return true, slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == flag })
}

// configure loads the configuration and runs the one validation every command shares
// (valves.Load validates; handlers.Check adds what the HTTP edge judges), before any
// command touches the storage directory.
func configure(args []string) (*valves.Config, valves.Sources, error) {
	cfg, src, err := valves.Load(defaultValves, args, os.LookupEnv)
	if err != nil {
		return nil, nil, err
	}
	if err := handlers.Check(cfg); err != nil {
		return nil, nil, err
	}
	return cfg, src, nil
}

func serve(cfg *valves.Config, stderr io.Writer) error {
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: logLevel(cfg.LogLevel)}))
	for _, w := range cfg.Warnings(os.Environ()) {
		log.Warn(w)
	}
	// Bind first: a port already in use must not leave a fresh storage directory behind.
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("cannot listen on %s: the address is already in use (another fileshed?): stop that process "+
				"or choose another address with --listen or FILESHED_LISTEN", cfg.Listen)
		}
		return fmt.Errorf("cannot listen on %s (--listen, FILESHED_LISTEN): %w", cfg.Listen, err)
	}
	defer ln.Close()
	// The wiring (handlers.Build gives the tests the same): who calls, the kernel and its
	// tool families, the HTTP edge.
	client, auth, err := handlers.Identity(cfg)
	if err != nil {
		return err
	}
	set, err := tools.Open(cfg, core.Options{OpenWebUI: client}, log)
	if err != nil {
		return err
	}
	svc := set.Service
	defer svc.Close() // runs after drain: the database closes after every call
	h, _ := handlers.New(handlers.Deps{Tools: set, Auth: auth, Log: log})
	logSandbox(log, svc.SandboxStatus())
	// Every request's context derives from base: cancelling it at the end of the grace
	// period stops the calls still running (their commands' process groups are killed).
	base, cancelCalls := context.WithCancel(context.Background())
	defer cancelCalls()
	srv := handlers.NewServer(cfg.Listen, h, handlers.DefaultTimeouts(cfg))
	srv.BaseContext = func(net.Listener) context.Context { return base }
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("fileshed listening", "addr", ln.Addr().String(), "auth_mode", cfg.Auth.Mode, "public_url", cfg.PublicURL())
	select {
	case err := <-errc:
		return err
	case <-sigs:
	}
	return drain(srv, svc, cancelCalls, sigs, time.Duration(cfg.ShutdownGraceSeconds)*time.Second, log)
}

// drain stops the server gracefully: readiness off, no new connections, calls in flight
// get grace to finish; then running commands are killed and the calls get a few seconds to
// answer. A second signal exits at once.
func drain(srv *http.Server, svc *core.Service, cancelCalls context.CancelFunc, sigs <-chan os.Signal, grace time.Duration, log *slog.Logger) error {
	svc.BeginShutdown()
	log.Info("shutting down", "grace_seconds", grace.Seconds(), "running_commands", svc.RunningCommands())
	go func() {
		<-sigs
		log.Warn("second signal: exiting now")
		os.Exit(1)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		log.Warn("grace period over: stopping the calls still running", "running_commands", svc.RunningCommands())
		cancelCalls()
		final, cancelFinal := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancelFinal()
		err = srv.Shutdown(final)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// healthcheck probes the server at the listen address (on loopback when it listens on every
// interface): /healthz, the process answers; with ready, /readyz, it can serve calls (the
// image's HEALTHCHECK: a server whose commands are all refused is not healthy). A refusal
// carries what the probe answered.
func healthcheck(cfg *valves.Config, ready bool) error {
	host, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	path := "/healthz"
	if ready {
		path = "/readyz"
	}
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + net.JoinHostPort(host, port) + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("%s answered %d: %s", path, resp.StatusCode, bytes.TrimSpace(body))
	}
	return nil
}

// printSpec prints the OpenAPI document; building it touches no storage (handlers.Spec).
func printSpec(cfg *valves.Config, w io.Writer) error {
	b, err := json.MarshalIndent(handlers.Spec(cfg).OpenAPI(), "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// usageText is the answer to fileshed --help.
const usageText = `fileshed: a sandboxed file workshop for Open WebUI (an OpenAPI tool server). Linux only.

Usage:
  fileshed [--flag value ...]       serve (the default command)
  fileshed version                  print the version and the commit
  fileshed valves [--env] [flags]   print the effective configuration: each setting's source,
                                    variable and flag (--env: as FILESHED_* lines, an env file)
  fileshed openapi                  print the OpenAPI document
  fileshed healthcheck [--ready]    exit 0 when the server at --listen answers /healthz
                                    (--ready: /readyz, i.e. it can serve calls and run commands)
  fileshed admin --help             operator commands (quota, locks, audit, backup, restore, verify,
                                    import-original: move the files of the original Fileshed over)

Every setting (valve) is a key of the YAML file named by --config or FILESHED_CONFIG, a flag
(dots and "_" become "-") and an environment variable (FILESHED_ + the key in capitals, dots
become "_"); secrets also read FILESHED_<NAME>_FILE. Lists take comma-separated values or
JSON, maps JSON. For example:
  --listen 127.0.0.1:8000            FILESHED_LISTEN
  --storage-base-path ./data         FILESHED_STORAGE_BASE_PATH
  --auth-mode session                FILESHED_AUTH_MODE (session, jwt, headers, none)
  --openwebui-url http://owui:8080   FILESHED_OPENWEBUI_URL
  --cors-allowed-origins https://a.example,https://b.example   FILESHED_CORS_ALLOWED_ORIGINS
'fileshed valves' lists them all; README.md explains each.
`

// versionText is the answer to fileshed version: the API version plus what the Go build
// recorded (module version, VCS revision and time, toolchain).
func versionText() string {
	out := "fileshed " + handlers.Version
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return out + " (no build information) " + runtime.Version()
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		out += " module " + v
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if commit != "" {
		out += " commit " + commit[:min(len(commit), 12)]
	} else if rev := settings["vcs.revision"]; rev != "" {
		out += " commit " + rev[:min(len(rev), 12)]
		if settings["vcs.modified"] == "true" {
			out += "+dirty"
		}
		if t := settings["vcs.time"]; t != "" {
			out += " (" + t + ")"
		}
	}
	return out + " " + bi.GoVersion + " " + runtime.GOOS + "/" + runtime.GOARCH
}

func logLevel(name string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(name)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// logSandbox says at start-up what confines commands, loudly when commands are
// refused (exec_sandbox: required on a kernel without Landlock) or run without Landlock.
func logSandbox(log *slog.Logger, sb map[string]any) {
	attrs := []any{"mode", sb["mode"], "landlock_abi", sb["landlock_abi"], "coverage", sb["coverage"]}
	switch {
	case sb["ready"] != true:
		log.Error("commands are disabled: exec_sandbox is required and this kernel has no Landlock "+
			"(exec_sandbox: best_effort runs them without it)", attrs...)
	case sb["enforced"] != true:
		log.Warn("commands run without Landlock: only the policy, seccomp and rlimits confine them", attrs...)
	default:
		log.Info("commands are confined by Landlock", attrs...)
	}
}
