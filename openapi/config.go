package openapi

import (
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"
)

// Title is the API title shown in Open WebUI's tool list.
const Title = "fileshed"

// arraysNotNullable sets huma's process-wide DefaultArrayNullable once: servers built at
// once (parallel tests) would race on it, each writing it while another's registration reads
// it.
var arraysNotNullable sync.Once

// Config returns the huma configuration: OpenAPI 3.1 at /openapi.json (3.0 at
// /openapi-3.0.json), no docs UI, no schema routes, no `$schema` link transformer.
func Config(version string) huma.Config {
	// Arrays are never nullable: nullable arrays become type arrays that some providers reject.
	arraysNotNullable.Do(func() { huma.DefaultArrayNullable = false })
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
	for _, item := range doc.Paths {
		if item.Post != nil && item.Post.RequestBody != nil {
			for _, mt := range item.Post.RequestBody.Content {
				clean(mt.Schema)
			}
		}
	}
	nameZonesOnce(doc.Paths, schemas)
}

// zonesNamedIn are the tools whose zone argument names the zones: the ones a model calls
// first. The others' zone argument has no description (the model has read the names in
// these, and in shed_help's quick reference): the spec is sent with every chat request,
// and the same 31 characters on 20 tools were 500 of its 14,000 (issue 38).
var zonesNamedIn = map[string]bool{
	"/shed_tree": true, "/shed_read": true, "/shed_create_file": true, "/shed_patch_text": true, "/shed_exec": true,
}

// nameZonesOnce drops zoneDoc from the zone argument of every tool not in zonesNamedIn.
// A request schema shared with a tool that names the zones keeps it.
func nameZonesOnce(paths map[string]*huma.PathItem, schemas map[string]*huma.Schema) {
	keep := map[*huma.Schema]bool{}
	var drop []*huma.Schema
	for p, item := range paths {
		if item.Post == nil || item.Post.RequestBody == nil {
			continue
		}
		for _, mt := range item.Post.RequestBody.Content {
			s := mt.Schema
			if s != nil && s.Ref != "" {
				s = schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]
			}
			if s == nil {
				continue
			}
			if zonesNamedIn[p] {
				keep[s] = true
			} else {
				drop = append(drop, s)
			}
		}
	}
	for _, s := range drop {
		if z := s.Properties["zone"]; z != nil && !keep[s] && z.Description == zoneDoc {
			z.Description = ""
		}
	}
}

// rareFlags are arguments every tool accepts but a model almost never needs: the
// quick reference in shed_help documents them once instead of every tool carrying them.
var rareFlags = []string{"allow_zone_in_path", "safe"}

// zoneDoc is the one short description of the zone argument (enums are dropped by some Open
// WebUI conversions, so the values are named in words).
const zoneDoc = "uploads|storage|documents|group"

// commonDocs are the short descriptions of arguments many tools share.
// An empty text drops the description: the name says it.
var commonDocs = map[string]string{
	"group":     "",
	"message":   "",
	"overwrite": "",
	"mode":      "owner, group or owner_ro",
	// expected_hash: shed_help's quick reference and its "conditional edits" guide say it
	// once (the hash of your last read; "new": must not exist).
	"expected_hash": "",
}

// clean makes a schema cheap for the model without changing what the server accepts
// (decoding validates against the Go types, not against this document): no nullable, open
// objects, no number formats or bounds the description already states, rare flags removed.
func clean(s *huma.Schema) {
	if s == nil {
		return
	}
	s.AdditionalProperties = nil
	s.Nullable = false
	s.Format = ""
	s.Minimum, s.Maximum = nil, nil
	for _, f := range rareFlags {
		delete(s.Properties, f)
	}
	if z := s.Properties["zone"]; z != nil && len(z.Enum) == 4 {
		z.Description, z.Enum = zoneDoc, nil
	}
	for name, doc := range commonDocs {
		if p := s.Properties[name]; p != nil {
			p.Description = doc
		}
	}
	if p := s.Properties["path"]; p != nil && strings.Contains(p.Description, "relative to the zone") {
		p.Description = "" // every path is zone-relative: the quick reference says it once
	}
	for _, p := range s.Properties {
		clean(p)
	}
	clean(s.Items)
}
