package handlers

import (
	"github.com/danielgtaylor/huma/v2"
)

// registerArchive registers the archive tools (shed_help howto='archives' has the details).
func registerArchive(api huma.API, d Deps) {
	s := d.Tools
	tool(api, d, toolSpec{name: "shed_zip", hints: additive, summary: "Compress into a ZIP",
		description: "Compress a file or folder into a new .zip in the same zone (symlinks skipped)."}, s.Archives.Zip)
	tool(api, d, toolSpec{name: "shed_unzip", hints: destructive, summary: "Extract a ZIP",
		description: "Extract a .zip (from src_zone, e.g. uploads) safely; all or nothing; limits apply."}, s.Archives.Unzip)
	tool(api, d, toolSpec{name: "shed_zipinfo", hints: readOnly, summary: "List a ZIP",
		description: "List a .zip's entries, totals and warnings about what shed_unzip would refuse."}, s.Archives.Zipinfo)
}
