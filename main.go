// Command fileshed is an OpenAPI tool server that gives Open WebUI users a persistent,
// sandboxed file workshop. Wiring only: load valves -> core.New -> handlers.New -> serve.
//
//	fileshed [flags]            serve (default)
//	fileshed healthcheck        probe GET /healthz of the configured listen address
//	fileshed openapi            print the OpenAPI 3.1 document
//	fileshed valves             print the effective configuration (secrets redacted) and sources
//	fileshed admin ...          operator commands (quota, locks, audit, sandbox ls, backup, restore, verify)
package main

import (
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
	"syscall"
	"time"

	"github.com/fileshed/fileshed/admin"
	"github.com/fileshed/fileshed/core/sandbox/launch"
	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
)

//go:embed valves.yaml
var defaultValves []byte

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
	if cmd == "admin" {
		// The admin commands parse their own flags; valves come from the environment
		// (FILESHED_*, FILESHED_CONFIG) and --storage-base-path.
		cfg, _, err := valves.Load(defaultValves, nil, os.LookupEnv)
		if err != nil {
			fmt.Fprintln(stderr, "fileshed: configuration:", err)
			return 2
		}
		return admin.Run(cfg, args, stdout, stderr)
	}
	cfg, src, err := valves.Load(defaultValves, args, os.LookupEnv)
	if err != nil {
		fmt.Fprintln(stderr, "fileshed: configuration:", err)
		return 2
	}
	switch cmd {
	case "serve":
		err = serve(cfg, stderr)
	case "healthcheck":
		err = healthcheck(cfg)
	case "openapi":
		err = printSpec(cfg, stdout)
	case "valves":
		err = cfg.Report(stdout, src)
	default:
		err = fmt.Errorf("unknown command %q (serve, healthcheck, openapi, valves)", cmd)
	}
	if err != nil {
		fmt.Fprintln(stderr, "fileshed:", err)
		return 1
	}
	return 0
}

func serve(cfg *valves.Config, stderr io.Writer) error {
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: logLevel(cfg.LogLevel)}))
	if err := checkListen(cfg); err != nil {
		return err
	}
	h, _, svc, err := handlers.Build(cfg, log)
	if err != nil {
		return err
	}
	defer svc.Close()
	srv := handlers.NewServer(cfg.Listen, h, handlers.DefaultTimeouts(cfg))
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("fileshed listening", "addr", ln.Addr().String(), "auth_mode", cfg.Auth.Mode, "public_url", cfg.PublicURL())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.ExecTimeoutMax+5)*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// checkListen refuses mode none on a non-loopback address unless explicitly allowed: with
// no authentication, anyone who reaches the port would own the workshop.
func checkListen(cfg *valves.Config) error {
	if cfg.Auth.Mode != "none" || cfg.Auth.AllowInsecureNone {
		return nil
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("auth.mode none refuses to listen on %q (not loopback): set auth.mode, or auth.allow_insecure_none: true", cfg.Listen)
}

func healthcheck(cfg *valves.Config) error {
	_, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return err
	}
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://127.0.0.1:" + port + "/healthz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthz answered %d", resp.StatusCode)
	}
	return nil
}

// printSpec prints the OpenAPI document without touching the storage directory.
func printSpec(cfg *valves.Config, w io.Writer) error {
	tmp, err := os.MkdirTemp("", "fileshed-spec-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	c := *cfg
	c.StorageBasePath = tmp
	c.Auth.Mode = "none"
	_, api, svc, err := handlers.Build(&c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer svc.Close()
	b, err := json.MarshalIndent(api.OpenAPI(), "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

func logLevel(name string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(name)); err != nil {
		return slog.LevelInfo
	}
	return l
}
