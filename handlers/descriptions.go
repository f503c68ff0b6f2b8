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

// hints are a tool's effects, declared once beside its description (toolSpec.hints) and sent
// only as MCP tool annotations (readOnlyHint, destructiveHint, idempotentHint), never in the
// OpenAPI spec, which costs tokens in every chat. Exactly one of readOnly, additive and
// destructive; idempotent may join the last two.
type hints uint8

const (
	readOnly    hints = 1 << iota // changes nothing
	additive                      // writes, but never deletes or replaces what exists
	destructive                   // may delete or replace files, locks, links or keys
	idempotent                    // the same call again changes nothing more
)

// valid reports whether h names exactly one kind of effect.
func (h hints) valid() bool {
	kind := h &^ idempotent
	return kind == readOnly || kind == additive || kind == destructive
}

// mergeHints are the hints of a tool that runs one of several: read-only when all are,
// destructive when any is, idempotent when all are.
func mergeHints(members []hints) hints {
	all, some := readOnly|idempotent, hints(0)
	for _, h := range members {
		if h&readOnly != 0 {
			h |= idempotent
		}
		all &= h
		some |= h
	}
	switch {
	case all&readOnly != 0:
		return readOnly
	case some&destructive != 0:
		return destructive | all&idempotent
	}
	return additive | all&idempotent
}
