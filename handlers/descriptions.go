package handlers

import (
	"sort"

	"github.com/danielgtaylor/huma/v2"
)

// applyDescriptions replaces the descriptions of the model-facing tools the operator named
// in tool_descriptions; names that are not model-facing tools are reported by unknownTools.
func applyDescriptions(api huma.API, overrides map[string]string) {
	for name, text := range overrides {
		if item := api.OpenAPI().Paths["/"+name]; item != nil && item.Post != nil {
			item.Post.Description = text
		}
	}
}

// unknownTools lists the names of overrides that no model-facing tool has, sorted.
func unknownTools(api huma.API, overrides map[string]string) []string {
	var unknown []string
	for name := range overrides {
		if item := api.OpenAPI().Paths["/"+name]; item == nil || item.Post == nil {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	return unknown
}
