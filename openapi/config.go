package openapi

import (
	"github.com/danielgtaylor/huma/v2"
)

// Title is the API title shown in Open WebUI's tool list.
const Title = "fileshed"

// Config returns the huma configuration: OpenAPI 3.1 at /openapi.json (3.0 at
// /openapi-3.0.json), no docs UI, no schema routes, no `$schema` link transformer.
func Config(version string) huma.Config {
	// Arrays are never nullable: nullable arrays become type arrays that some providers reject.
	huma.DefaultArrayNullable = false
	c := huma.DefaultConfig(Title, version)
	c.Info.Description = "A persistent, sandboxed file workshop for Open WebUI: zones (uploads, storage, " +
		"documents, group), whitelisted commands, locked edits, SQLite, archives and download links. " +
		"Call shed_help first."
	c.CreateHooks = nil // the default hook adds a `$schema` property models would see as an argument
	c.DocsPath = ""
	c.SchemasPath = ""
	c.OpenAPIPath = "/openapi"
	return c
}

// Finish cleans the registered schemas once every operation is registered: unknown
// properties are allowed (models send extra keys, which are ignored), and nullable flags
// are dropped (they would turn into type arrays).
// Huma's generic "default" error responses are dropped too: every answer is the 200
// envelope, and the spec is sent with every chat request, so it stays small.
func Finish(api huma.API) {
	doc := api.OpenAPI()
	for _, item := range doc.Paths {
		if item.Post != nil {
			delete(item.Post.Responses, "default")
		}
	}
	schemas := doc.Components.Schemas.Map()
	delete(schemas, "StatusError")
	for _, s := range schemas {
		clean(s)
	}
}

func clean(s *huma.Schema) {
	if s == nil {
		return
	}
	s.AdditionalProperties = nil
	s.Nullable = false
	for _, p := range s.Properties {
		clean(p)
	}
	clean(s.Items)
}
