package handlers

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"
)

// registerLinks registers the links tools (shed_link_create, shed_link_list,
// shed_link_delete, merged for the model into shed_link) and mounts the download route GET|HEAD /dl/{token}[/sub/path], which
// is public (the token is the credential) and hidden from the spec.
func registerLinks(r chi.Router, api huma.API, d Deps) {
	s := d.Tools
	tool(api, d, toolSpec{name: "shed_link_create", hints: additive, summary: "Make a download link",
		description: "Signed, expiring download link to a file or folder: show clickable_link to the user."}, s.Links.LinkCreate)
	tool(api, d, toolSpec{name: "shed_link_list", hints: readOnly, summary: "List your download links",
		description: "Your download links with their state, downloads and expiry."}, s.Links.LinkList)
	tool(api, d, toolSpec{name: "shed_link_delete", hints: destructive | idempotent, summary: "Revoke a download link",
		description: "Revoke one of your download links at once (link_id from shed_link_list)."}, s.Links.LinkDelete)
	// The model sees one tool, shed_link(action); the three stay routes of their own.
	merge(api, d, mergedSpec{name: "shed_link", summary: "Download links",
		description: "Download links: create (zone, path; show clickable_link to the user), list, delete (link_id)",
		actions:     []mergedAction{{"create", "shed_link_create"}, {"list", "shed_link_list"}, {"delete", "shed_link_delete"}}})
	dl := &linkServer{svc: s, metrics: d.metrics, log: d.Log, base: d.cfg.PublicURL()}
	noToken := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		commonHeaders(w.Header())
		errorPage(w, http.StatusNotFound, "This link does not exist. Check that it was copied whole.")
	})
	for _, m := range []string{"GET", "HEAD"} {
		r.Method(m, "/dl/{token}", dl)
		r.Method(m, "/dl/{token}/*", dl)
		r.Method(m, "/dl", noToken)
		r.Method(m, "/dl/", noToken)
	}
}
