package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alecthomas/kong"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/valves"
)

// cli is the command tree of `fileshed admin`.
type cli struct {
	StorageBasePath string `name:"storage-base-path" help:"Storage directory (default: the storage_base_path valve)."`

	Quota struct {
		Show      struct{} `cmd:"" help:"Recorded usage and limit of every user and group."`
		Reconcile struct {
			User  []string `help:"User ids (default: every owner on disk)."`
			Group []string `help:"Group ids."`
		} `cmd:"" help:"Measure owners on disk and record it (refused while a server runs: use shed_maintenance online)."`
	} `cmd:"" help:"Quotas."`
	Locks struct {
		List    struct{} `cmd:"" help:"Every locked edit."`
		Release struct {
			Zone string `arg:"" help:"Zone key as listed (e.g. user:alice:documents)."`
			Path string `arg:"" help:"Locked file."`
		} `cmd:"" help:"Break a lock (the holder's save is then refused)."`
	} `cmd:"" help:"Locked edits."`
	Audit struct {
		Export struct {
			Since time.Time `help:"From this time (RFC 3339)." format:"2006-01-02T15:04:05Z07:00"`
			Until time.Time `help:"Before this time (RFC 3339)." format:"2006-01-02T15:04:05Z07:00"`
			User  string    `help:"Only this user."`
		} `cmd:"" help:"Audit trail as JSON lines on stdout."`
		Prune struct {
			OlderThanDays int `name:"older-than-days" default:"-1" help:"Delete entries older than this many days (default: audit_retention_days)."`
		} `cmd:"" help:"Delete old audit entries."`
	} `cmd:"" help:"Audit trail."`
	Sandbox struct {
		Ls struct {
			Kind string `arg:"" enum:"user,group" help:"user or group."`
			ID   string `arg:"" help:"User or group id."`
			Path string `arg:"" optional:"" help:"Folder inside the zone."`
			Zone string `default:"storage" enum:"uploads,storage,documents" help:"Zone of a user."`
		} `cmd:"" help:"List a folder of any zone (read-only)."`
	} `cmd:"" help:"Look into zones."`
	Backup struct {
		Dir string `arg:"" help:"Empty or missing directory to write the backup to."`
	} `cmd:"" help:"Consistent copy of the state database, zones and repositories (safe while serving)."`
	Restore struct {
		Dir   string `arg:"" help:"A directory written by backup."`
		Force bool   `help:"Replace a storage directory that holds data."`
	} `cmd:"" help:"Restore a backup (refused while a server runs on the storage)."`
	ImportOriginal struct {
		Dir                 string `arg:"" optional:"" help:"The original Fileshed's storage directory (its storage_base_path), read only."`
		Force               bool   `help:"Replace a storage directory that holds data (the old one is kept until the new one is in place)."`
		Finish              bool   `help:"Complete an import that was interrupted while it replaced the storage (no DIR)."`
		Rollback            bool   `help:"Undo an import that was interrupted while it replaced the storage: the storage it replaced comes back (no DIR)."`
		NoOwnership         bool   `name:"no-ownership" help:"Import without the original's access_auth.sqlite: every group file becomes writable by every member."`
		AllowDamagedHistory bool   `name:"allow-damaged-history" help:"Import a repository whose history cannot be read in full as one new version (the report names what is lost) instead of refusing."`
	} `cmd:"" name:"import-original" help:"Copy an original Fileshed storage (zones, git history, group ownership) into this storage, all or nothing (refused while a server runs on it)."`
	Verify     struct{} `cmd:"" help:"Check the state database, every repository and quotas against the disk."`
	Migrate    struct{} `cmd:"" help:"Apply the state database's migrations and exit (a migration job before the servers start); prints the schema version before and after."`
	Encryption struct {
		Rotate struct {
			OldKeyFile string `name:"old-key-file" required:"" help:"File holding the previous encryption.master_key (the new one is the configured valve)."`
		} `cmd:"" help:"Re-wrap every user's data key with the configured master key (files are unchanged); restart the server after."`
	} `cmd:"" help:"Encryption at rest."`
	StateCopy struct {
		To     string `help:"URL of the EMPTY PostgreSQL database (postgres://user:password@host:5432/db); visible to other local users in the process list: prefer --to-file."`
		ToFile string `name:"to-file" help:"File holding that URL."`
	} `cmd:"" name:"state-copy" help:"Copy the SQLite state (ownership, keys, locks, links, members, usage, audit: every table) into an empty PostgreSQL database, verified by row counts, and record it as the storage's state: the first step from one server to replicas (refused while a server runs)."`
	StateFingerprints struct {
		Record bool `required:"" help:"Record the configured values' fingerprints."`
	} `cmd:"" name:"state-fingerprints" help:"After a deliberate change of encryption.master_key or links.secret: record the new values' fingerprints, which every replica compares at start (refused while a server runs)."`
	Changes struct {
		User         string    `required:"" help:"The user whose changes to list."`
		Since        time.Time `help:"From this time (RFC 3339)." format:"2006-01-02T15:04:05Z07:00"`
		Conversation string    `help:"Only this conversation (its sanitised chat id)."`
	} `cmd:"" help:"The change journal of a user, newest first (what each conversation changed, in which zone, and whether it can be undone)."`
	Links struct {
		List struct {
			User string `help:"Only this user's links."`
		} `cmd:"" help:"Download links with their state."`
		Revoke struct {
			ID string `arg:"" help:"Link id as listed."`
		} `cmd:"" help:"Revoke a link at once (any user's)."`
	} `cmd:"" help:"Download links."`
}

// Run executes `fileshed admin args...` with the configuration cfg and returns the exit
// code (0 ok, 1 failure or problems found, 2 usage error).
func Run(cfg *valves.Config, args []string, stdout, stderr io.Writer) int {
	var c cli
	exit := -1
	parser, err := kong.New(&c, kong.Name("fileshed admin"), kong.Writers(stdout, stderr),
		kong.Description("Operator commands on a fileshed storage directory."),
		kong.Exit(func(code int) { exit = code }))
	if err != nil {
		fmt.Fprintln(stderr, "fileshed admin:", err)
		return 2
	}
	kctx, err := parser.Parse(args)
	if exit >= 0 {
		return exit // --help
	}
	if err != nil {
		fmt.Fprintln(stderr, "fileshed admin:", err)
		return 2
	}
	if c.StorageBasePath != "" {
		cfg.StorageBasePath = c.StorageBasePath
	}
	if err := c.run(context.Background(), kctx.Command(), cfg, stdout); err != nil {
		fmt.Fprintln(stderr, "fileshed admin:", err)
		return 1
	}
	return 0
}

// run dispatches one command.
func (c *cli) run(ctx context.Context, cmd string, cfg *valves.Config, out io.Writer) error {
	if !strings.HasPrefix(cmd, "import-original") { // restore and migrate open no core.Service first
		base, err := filepath.Abs(cfg.StorageBasePath)
		if err != nil {
			return err
		}
		if err := core.ImportInterrupted(base); err != nil {
			return err
		}
	}
	if strings.HasPrefix(cmd, "restore") {
		rep, err := core.Restore(ctx, cfg, c.Restore.Dir, c.Restore.Force)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "restored %s into %s (usage reconciled)\n", c.Restore.Dir, cfg.StorageBasePath)
		if rep.SkippedCount > 0 {
			fmt.Fprintf(out, "note: the backup lacks %d name(s) it could not read when it was taken:\n", rep.SkippedCount)
			for _, p := range rep.Skipped {
				fmt.Fprintf(out, "  %s\n", p)
			}
		}
		return nil
	}
	if strings.HasPrefix(cmd, "import-original") {
		o := c.ImportOriginal
		return importOriginal(ctx, cfg, o.Dir, importOptions{force: o.Force, finish: o.Finish, rollback: o.Rollback,
			noOwnership: o.NoOwnership, allowDamaged: o.AllowDamagedHistory}, out)
	}
	// Every other command reads a storage that exists: opening one creates what is missing,
	// so a mistyped path would become a fresh, empty store that "verifies". Migrating a
	// PostgreSQL state needs no storage directory (a migration job mounts no volume).
	if _, err := os.Stat(cfg.StorageBasePath); errors.Is(err, fs.ErrNotExist) && !(cmd == "migrate" && cfg.State.Driver == store.Postgres) {
		return fmt.Errorf("the storage directory %s does not exist (--storage-base-path, FILESHED_STORAGE_BASE_PATH); nothing was created",
			cfg.StorageBasePath)
	}
	if cmd == "migrate" {
		return migrate(ctx, cfg, out)
	}
	if cmd == "state-copy" {
		return stateCopy(ctx, cfg, c.StateCopy.To, c.StateCopy.ToFile, out)
	}
	svc, err := core.New(cfg, core.Options{Admin: true})
	if err != nil {
		return err
	}
	defer svc.Close()
	switch {
	case cmd == "quota show":
		rows, err := svc.AdminUsage(ctx)
		if err != nil {
			return err
		}
		return usageTable(out, rows)
	case cmd == "quota reconcile":
		var rows []core.OwnerReport
		if len(c.Quota.Reconcile.User)+len(c.Quota.Reconcile.Group) == 0 {
			rows, err = svc.AdminReconcile(ctx, "")
		} else {
			if len(c.Quota.Reconcile.User) > 0 {
				rows, err = svc.AdminReconcile(ctx, "user", c.Quota.Reconcile.User...)
			}
			if err == nil && len(c.Quota.Reconcile.Group) > 0 {
				var more []core.OwnerReport
				more, err = svc.AdminReconcile(ctx, "group", c.Quota.Reconcile.Group...)
				rows = append(rows, more...)
			}
		}
		if err != nil {
			return err
		}
		return usageTable(out, rows)
	case cmd == "locks list":
		locks, err := svc.AdminLocks(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ZONE\tPATH\tUSER\tCONVERSATION\tSINCE")
		for _, l := range locks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.ZoneKey, l.Path, l.UserID, l.ConvID, l.Since.UTC().Format(time.RFC3339))
		}
		return tw.Flush()
	case cmd == "locks release <zone> <path>":
		if err := svc.AdminReleaseLock(ctx, c.Locks.Release.Zone, c.Locks.Release.Path); err != nil {
			return err
		}
		fmt.Fprintf(out, "released %s in %s\n", c.Locks.Release.Path, c.Locks.Release.Zone)
		return nil
	case cmd == "audit export":
		_, err := svc.AdminExportAudit(ctx, store.AuditFilter{Since: c.Audit.Export.Since, Until: c.Audit.Export.Until,
			UserID: c.Audit.Export.User}, out)
		return err
	case cmd == "audit prune":
		days := c.Audit.Prune.OlderThanDays
		if days < 0 {
			days = cfg.AuditRetentionDays
		}
		if days == 0 {
			fmt.Fprintln(out, "nothing pruned (retention 0 = keep everything)")
			return nil
		}
		n, err := svc.AdminPruneAudit(ctx, time.Now().AddDate(0, 0, -days))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "pruned %d audit entries older than %d days\n", n, days)
		return nil
	case strings.HasPrefix(cmd, "sandbox ls"):
		ls := c.Sandbox.Ls
		entries, err := svc.AdminList(ls.Kind, ls.ID, ls.Zone, ls.Path)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TYPE\tSIZE\tMODIFIED\tNAME")
		for _, e := range entries {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", e.Type, e.Size, e.ModTime.UTC().Format(time.RFC3339), e.Name)
		}
		return tw.Flush()
	case cmd == "backup <dir>":
		rep, err := svc.AdminBackup(ctx, c.Backup.Dir)
		if err != nil {
			return fmt.Errorf("%w (the backup in %s is not finished: restore refuses it)", err, c.Backup.Dir)
		}
		fmt.Fprintf(out, "backup written to %s\n", c.Backup.Dir)
		if rep.SkippedCount > 0 {
			for _, p := range rep.Skipped {
				fmt.Fprintf(out, "  not copied: %s\n", p)
			}
			return fmt.Errorf("%d name(s) could not be read and are not in the backup (listed in its fileshed-backup.json); everything else is", rep.SkippedCount)
		}
		return nil
	case cmd == "encryption rotate":
		old, err := os.ReadFile(c.Encryption.Rotate.OldKeyFile)
		if err != nil {
			return fmt.Errorf("old key: %w", err)
		}
		rep, err := svc.AdminRotateMasterKey(ctx, strings.TrimRight(string(old), "\r\n"))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "rotated %d user key(s), %d already on the new key\n", rep.Rotated, rep.Already)
		if len(rep.Unknown) > 0 {
			return fmt.Errorf("%d user key(s) are wrapped by neither key: %s", len(rep.Unknown), strings.Join(rep.Unknown, ", "))
		}
		return nil
	case cmd == "state-fingerprints":
		if err := svc.AdminRecordFingerprints(ctx); err != nil {
			return err
		}
		fmt.Fprintln(out, "recorded the fingerprints of encryption.master_key and links.secret: replicas with these values start")
		return nil
	case strings.HasPrefix(cmd, "links"):
		return c.links(ctx, cmd, svc, out)
	case cmd == "changes":
		return c.changes(ctx, svc, out)
	case cmd == "verify":
		rep, err := svc.AdminVerify(ctx)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
		if rep.Problems > 0 {
			return fmt.Errorf("%d problem(s) found", rep.Problems)
		}
		return nil
	}
	return fmt.Errorf("unknown command %q", cmd)
}

// migrate applies the state database's pending migrations and says the schema version it
// found and left. Servers migrate at start too; this runs it once, ahead of them.
func migrate(ctx context.Context, cfg *valves.Config, out io.Writer) error {
	base, err := filepath.Abs(cfg.StorageBasePath)
	if err != nil {
		return err
	}
	before, after, err := store.Migrate(ctx, core.StateSource(cfg, base))
	if err != nil {
		return err
	}
	if before == after {
		fmt.Fprintf(out, "state database (%s): schema version %d, nothing to migrate\n", cfg.State.Driver, after)
	} else {
		fmt.Fprintf(out, "state database (%s): schema version %d -> %d\n", cfg.State.Driver, before, after)
	}
	return nil
}

// usageTable prints owners' usage: bytes, and files (every name: files, folders, links).
// An owner whose reconcile could not read everything is listed after, with what it missed.
func usageTable(out io.Writer, rows []core.OwnerReport) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tID\tUSED\tLIMIT\tPERCENT\tFILES\tFILE LIMIT")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f%%\t%d\t%d\n", r.Kind, r.ID, r.Used, r.Limit, 100*float64(r.Used)/float64(max(r.Limit, 1)),
			r.UsedFiles, r.LimitFiles)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if len(r.Unmeasured) > 0 {
			fmt.Fprintf(out, "%s %s not reconciled (recorded usage kept), unreadable: %s\n", r.Kind, r.ID, strings.Join(r.Unmeasured, "; "))
		}
	}
	return nil
}
