// Package info is a tool family over the kernel (core): what a user and the model learn of the server: shed_help, shed_stats, shed_parameters, shed_maintenance. Every change of a zone
// goes through the kernel's write transaction (core.Tx).
//
// It imports the kernel, core's leaves and no sibling; the kernel never imports it.
package info

import (
	"github.com/fileshed/fileshed/core"
)

// Tools are this family's tools, over the kernel.
type Tools struct {
	// Kernel is the family's handle of the kernel (core.Kernel): zones, the transaction,
	// the queries; never the Service itself.
	core.Kernel
}

// New returns the family's tools over the kernel k.
func New(k core.Kernel) *Tools { return &Tools{Kernel: k} }
