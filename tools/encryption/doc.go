// Package encryption is a tool family over the kernel (core): encryption at rest, the tools: shed_encryption setup, status, migrate, disable. Every change of a zone
// goes through the kernel's write transaction (core.Tx).
//
// It imports the kernel, core's leaves and no sibling; the kernel never imports it.
package encryption

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
