package handlers

import (
	"github.com/danielgtaylor/huma/v2"
)

func registerFiles(api huma.API, d Deps) {
	s := d.Service
	tool(api, d, toolSpec{name: "shed_tree", summary: "Directory tree of a zone",
		description: "Tree of a folder in a zone (directories first, hidden names skipped, 100 entries per folder). Paths are relative to the zone: never prefix the zone name."}, s.Tree)
}
