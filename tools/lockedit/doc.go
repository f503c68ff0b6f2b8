// Package lockedit is a tool family over the kernel (core): the locked edit: shed_lockedit open, overwrite, exec, save, cancel, force_unlock. Every change of a zone
// goes through the kernel's write transaction (core.Tx).
//
// It imports the kernel, core's leaves and the siblings commands; the kernel never imports it.
package lockedit

import (
	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/tools/commands"
)

// Tools are this family's tools, over the kernel.
type Tools struct {
	// Kernel is the family's handle of the kernel (core.Kernel): zones, the transaction,
	// the queries; never the Service itself.
	core.Kernel
	// Commands runs a command in the working copy (shed_lockedit exec).
	Commands *commands.Tools
}

// New returns the family's tools over the kernel k.
func New(k core.Kernel, commands *commands.Tools) *Tools {
	return &Tools{Kernel: k, Commands: commands}
}
