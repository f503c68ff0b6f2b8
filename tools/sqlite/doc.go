// Package sqlite is a tool family over the kernel (core): shed_sqlite: queries, CSV import and export on a database file of a zone. Every change of a zone
// goes through the kernel's write transaction (core.Tx).
//
// It imports the kernel, core's leaves and no sibling; the kernel never imports it.
package sqlite

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
