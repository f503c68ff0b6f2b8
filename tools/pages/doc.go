// Package pages is a tool family over the kernel (core): result pages: shed_save_page writes a page and hands a link that renders it; shed_review (shed_version action=review) does so for a conversation's changes. Every change of a zone
// goes through the kernel's write transaction (core.Tx).
//
// It imports the kernel, core's leaves and the siblings files, links; the kernel never imports it.
package pages

import (
	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/tools/files"
	"github.com/fileshed/fileshed/tools/links"
)

// Tools are this family's tools, over the kernel.
type Tools struct {
	// Kernel is the family's handle of the kernel (core.Kernel): zones, the transaction,
	// the queries; never the Service itself.
	core.Kernel
	// Files writes the page.
	Files *files.Tools
	// Links hands the link that renders it.
	Links *links.Tools
}

// New returns the family's tools over the kernel k.
func New(k core.Kernel, files *files.Tools, links *links.Tools) *Tools {
	return &Tools{Kernel: k, Files: files, Links: links}
}
