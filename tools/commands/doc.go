// Package commands is a tool family over the kernel (core): the command tools: shed_exec (and the runner of shed_lockedit exec), shed_allowed_commands. It holds the
// policy (which commands, their classes, the hints), the quota watchdog and the launch; a
// writing command runs inside the kernel's command transaction (core.BeginCommand: locks,
// measure, record, guards, usage, ownership, commit).
//
// It imports the kernel, core's leaves and no sibling; the kernel never imports it.
package commands

import (
	"github.com/fileshed/fileshed/core"
)

// Tools are this family's tools, over the kernel.
type Tools struct {
	// Kernel is the family's handle of the kernel (core.Kernel): zones, the transactions,
	// the queries; never the Service itself.
	core.Kernel
}

// New returns the family's tools over the kernel k.
func New(k core.Kernel) *Tools { return &Tools{Kernel: k} }
