// Package links is a tool family over the kernel (core): the download links: shed_link create, list, delete, and what the /dl routes serve. Every change of a zone
// goes through the kernel's write transaction (core.Tx).
//
// It imports the kernel, core's leaves and no sibling; the kernel never imports it.
package links

import (
	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/linktoken"
)

// Tools are this family's tools, over the kernel.
type Tools struct {
	// Kernel is the family's handle of the kernel (core.Kernel): zones, the transaction,
	// the queries; never the Service itself.
	core.Kernel
	// signer signs and verifies the links' tokens: links.secret, or a key kept in the
	// state database (postgres) or the storage directory (linkSigner).
	signer *linktoken.Signer
}

// New returns the family's tools over the kernel k, with the link-signing key of its
// configuration.
func New(k core.Kernel) (*Tools, error) {
	signer, err := linkSigner(k)
	if err != nil {
		return nil, err
	}
	return &Tools{Kernel: k, signer: signer}, nil
}
