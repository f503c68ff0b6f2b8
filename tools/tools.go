// Package tools gathers the tool families over one kernel: what the handlers serve. Each
// family is a package of its own (tools/<family>); this package only builds them, in the
// order their siblings need.
package tools

import (
	"github.com/fileshed/fileshed/core"
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

// New builds every family over the kernel k.
func New(k *core.Service) (*Set, error) {
	l, err := links.New(k)
	if err != nil {
		return nil, err
	}
	cmds := commands.New(k)
	f := files.New(k, cmds)
	return &Set{Service: k, Files: f, Commands: cmds, Lockedit: lockedit.New(k, cmds), Groups: groups.New(k), Links: l,
		Archives: archives.New(k), SQLite: sqlite.New(k), Transfer: transfer.New(k), Versions: versions.New(k),
		Encryption: encryption.New(k), Pages: pages.New(k, f, l), Search: search.New(k, cmds, f), Info: info.New(k)}, nil
}
