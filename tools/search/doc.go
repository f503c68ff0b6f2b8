// Package search is a tool family over the kernel (core): shed_search, one search over the
// names and contents of every zone a caller can read, PDFs and office documents included,
// bounded and paged. It is read-only: it never writes a zone (the kernel's text cache, in
// the working folder, keeps what it extracts from PDFs).
//
// It imports the kernel, core's leaves and the siblings commands (the command timeout) and
// files (the sandboxed PDF reader); the kernel never imports it.
package search

import (
	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/tools/commands"
	"github.com/fileshed/fileshed/tools/files"
)

// Tools are this family's tools, over the kernel.
type Tools struct {
	// Kernel is the family's handle of the kernel (core.Kernel): zones, reads, the slots.
	core.Kernel
	// Commands gives the command timeout a search is bound by.
	Commands *commands.Tools
	// Files reads PDFs (pdftotext under the command limits).
	Files *files.Tools
	// texts keeps the PDF texts used last in memory.
	texts memTexts
}

// New returns the family's tools over the kernel k.
func New(k core.Kernel, commands *commands.Tools, files *files.Tools) *Tools {
	return &Tools{Kernel: k, Commands: commands, Files: files}
}
