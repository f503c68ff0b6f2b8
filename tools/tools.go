// Package tools gathers the tool families over one kernel: what the handlers serve. Each
// family is a package of its own (tools/<family>); this package only builds them, in the
// order their siblings need, over a kernel it is given (New) or builds (Open).
package tools

import (
	"context"
	"log/slog"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/tools/archives"
	"github.com/fileshed/fileshed/tools/commands"
	"github.com/fileshed/fileshed/tools/encryption"
	"github.com/fileshed/fileshed/tools/files"
	"github.com/fileshed/fileshed/tools/groups"
	"github.com/fileshed/fileshed/tools/info"
	"github.com/fileshed/fileshed/tools/links"
	"github.com/fileshed/fileshed/tools/lockedit"
	"github.com/fileshed/fileshed/tools/pages"
	"github.com/fileshed/fileshed/tools/search"
	"github.com/fileshed/fileshed/tools/sqlite"
	"github.com/fileshed/fileshed/tools/transfer"
	"github.com/fileshed/fileshed/tools/versions"
)

// Set is every tool family over one kernel; the kernel's own methods (readiness, metrics,
// shutdown) are reached through it too.
type Set struct {
	*core.Service
	Files      *files.Tools
	Commands   *commands.Tools
	Lockedit   *lockedit.Tools
	Groups     *groups.Tools
	Links      *links.Tools
	Archives   *archives.Tools
	SQLite     *sqlite.Tools
	Transfer   *transfer.Tools
	Versions   *versions.Tools
	Encryption *encryption.Tools
	Pages      *pages.Tools
	Search     *search.Tools
	Info       *info.Tools
}

// New builds every family over the kernel k: each holds its handle (core.Kernel), except
// commands, sqlite and encryption, which still embed the Service.
func New(k *core.Service) (*Set, error) {
	h := k.Kernel() // what the narrowed families hold; commands, sqlite, encryption still embed k
	l, err := links.New(h)
	if err != nil {
		return nil, err
	}
	cmds := commands.New(h)
	f := files.New(h, cmds)
	return &Set{Service: k, Files: f, Commands: cmds, Lockedit: lockedit.New(h, cmds), Groups: groups.New(h), Links: l,
		Archives: archives.New(h), SQLite: sqlite.New(h), Transfer: transfer.New(h), Versions: versions.New(h),
		Encryption: encryption.New(h), Pages: pages.New(h, f, l), Search: search.New(h, cmds, f), Info: info.New(h)}, nil
}

// Open builds the kernel from the configuration (core.New, with the collaborators opt
// carries) and every family over it: what main wires and what handlers.Build gives the
// tests, one function so that the two cannot differ. Data keys that the configured master
// key cannot unwrap are logged (those users are refused, nothing is changed). The caller
// closes the kernel (Set.Close).
func Open(cfg *valves.Config, opt core.Options, log *slog.Logger) (*Set, error) {
	k, err := core.New(cfg, opt)
	if err != nil {
		return nil, err
	}
	if n, err := k.EncryptionMismatch(context.Background()); err == nil && n > 0 {
		log.Error("encryption: the master key (encryption.master_key) is missing or is not the one the data keys were wrapped with; "+
			"these users' storage and uploads are refused (ENCRYPTION_KEY_REQUIRED or INVALID_ENCRYPTION_KEY), nothing is changed, "+
			"until the original key is configured", "users", n)
	}
	set, err := New(k)
	if err != nil {
		k.Close()
		return nil, err
	}
	return set, nil
}
