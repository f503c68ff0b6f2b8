// Package files is a tool family over the kernel (core): the file tools: shed_read, shed_read_bytes, shed_create_file, shed_patch_text, shed_patch_bytes, shed_delete, shed_rename, shed_tree, shed_file_type, shed_convert_eol, shed_hexdump. Every change of a zone
// goes through the kernel's write transaction (core.Tx).
//
// It imports the kernel, core's leaves and the siblings commands; the kernel never imports it.
package files

import (
	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/tools/commands"
)

// Tools are this family's tools, over the kernel.
type Tools struct {
	// Kernel is the family's handle of the kernel (core.Kernel): zones, the transaction,
	// the queries; never the Service itself.
	core.Kernel
	// Commands runs the PDF readers (pdftotext, pdfinfo) under the command limits.
	Commands *commands.Tools
}

// New returns the family's tools over the kernel k.
func New(k core.Kernel, commands *commands.Tools) *Tools {
	return &Tools{Kernel: k, Commands: commands}
}
