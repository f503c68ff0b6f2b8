package handlers

import (
	"github.com/danielgtaylor/huma/v2"
)

func registerFiles(api huma.API, d Deps) {
	s := d.Tools
	tool(api, d, toolSpec{name: "shed_tree", hints: readOnly, summary: "Directory tree of a zone",
		description: "List a folder as a tree (depth 1-10)."}, s.Files.Tree)
}
