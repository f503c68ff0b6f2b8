package handlers

import "github.com/danielgtaylor/huma/v2"

// registerPages registers shed_save_page: a Markdown or HTML result page in the user's
// files with a link that opens it in the browser (served by the links route, ?view).
func registerPages(api huma.API, d Deps) {
	tool(api, d, toolSpec{name: "shed_save_page", hints: destructive, summary: "Save a result page with a link",
		description: "Save a Markdown or HTML report page; show clickable_link to the user."}, d.Tools.Pages.SavePage)
}
