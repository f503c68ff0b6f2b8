package handlers

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTools are the MCP tools of the finished OpenAPI document: one per operation, with its
// operationId as name, its description (tool_descriptions applied), its summary as title,
// its request schema with the component references inlined (an object schema with no
// properties for a tool without arguments), and the annotations of its hints. There is no
// second list: what the model sees over OpenAPI is what it sees over MCP.
func mcpTools(doc *huma.OpenAPI, effects map[string]hints) []*mcp.Tool {
	// The JSON form is what Open WebUI reads too: the same clean-up (openapi.Finish), the
	// same omissions.
	b, err := json.Marshal(doc)
	if err != nil {
		panic("mcp: the OpenAPI document does not marshal: " + err.Error()) // caught by every test
	}
	var spec struct {
		Paths map[string]struct {
			Post *struct {
				OperationID string `json:"operationId"`
				Summary     string `json:"summary"`
				Description string `json:"description"`
				RequestBody *struct {
					Content map[string]struct {
						Schema any `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			} `json:"post"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		panic("mcp: the OpenAPI document does not unmarshal: " + err.Error())
	}
	var tools []*mcp.Tool
	for _, item := range spec.Paths {
		op := item.Post
		if op == nil || op.OperationID == "" {
			continue
		}
		var schema any = map[string]any{"type": "object", "properties": map[string]any{}}
		if op.RequestBody != nil {
			if mt, ok := op.RequestBody.Content["application/json"]; ok && mt.Schema != nil {
				schema = inline(mt.Schema, spec.Components.Schemas, nil)
			}
		}
		desc := op.Description
		if desc == "" {
			desc = op.Summary
		}
		tools = append(tools, &mcp.Tool{Name: op.OperationID, Title: op.Summary, Description: desc,
			InputSchema: schema, Annotations: annotations(effects[op.OperationID])})
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools
}

// inline replaces every {"$ref": "#/components/schemas/X"} in v by a copy of X, as Open
// WebUI's resolve_schema does (MCP input schemas are self-contained). path holds the
// references being expanded, so that a recursive schema stops instead of looping.
func inline(v any, schemas map[string]any, path []string) any {
	switch s := v.(type) {
	case map[string]any:
		if ref, ok := s["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			for _, p := range path {
				if p == name {
					return map[string]any{"type": "object"} // recursive: cut here
				}
			}
			return inline(schemas[name], schemas, append(path[:len(path):len(path)], name))
		}
		out := make(map[string]any, len(s))
		for k, x := range s {
			out[k] = inline(x, schemas, path)
		}
		return out
	case []any:
		out := make([]any, len(s))
		for i, x := range s {
			out[i] = inline(x, schemas, path)
		}
		return out
	}
	return v
}

// annotations are the MCP annotations of a tool's hints.
func annotations(h hints) *mcp.ToolAnnotations {
	destructive := h&destructive != 0
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    h&readOnly != 0,
		DestructiveHint: &destructive,
		IdempotentHint:  h&(readOnly|idempotent) != 0,
	}
}
