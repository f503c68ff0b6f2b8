package handlers

import (
	"github.com/danielgtaylor/huma/v2"
)

// registerSearch registers shed_search: one search over names and contents of every zone
// (the guide is shed_help(howto="search")).
func registerSearch(api huma.API, d Deps) {
	s := d.Tools
	tool(api, d, toolSpec{name: "shed_search", hints: readOnly, summary: "Search names and contents of the zones",
		description: "Find text in files (PDF/docx/xlsx too) and names; all zones unless zone; path: folder or glob; regex: RE2; more: offset=next_offset"}, s.Search.Search)
}
