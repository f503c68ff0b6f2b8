// Package versions is a tool family over the kernel (core): the history of versioned zones: shed_history and shed_restore. Every change of a zone
// goes through the kernel's write transaction (core.Tx).
//
// It imports the kernel, core's leaves and no sibling; the kernel never imports it.
package versions

import (
	"github.com/fileshed/fileshed/core"
)

// Tools are this family's tools, over the kernel.
type Tools struct {
	*core.Service
}

// New returns the family's tools over the kernel k.
func New(k *core.Service) *Tools { return &Tools{Service: k} }
