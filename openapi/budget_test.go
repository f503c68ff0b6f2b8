package openapi_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// TokenBudget is what the whole tool spec may cost the model on every chat request, counted
// with the o200k tokenizer on the tools array Open WebUI builds from /openapi.json. Features
// added later get their descriptions squeezed, never this budget raised.
const TokenBudget = 3500

// CharBudget is the same budget in characters, for models whose tokenizer is not o200k: the
// serialised tools array must stay within it too. It was 14,000 (4 characters per token);
// this spec measures 4.14 per o200k token, so 4 made the characters the tighter bound by
// 500: shed_search (issue 38) fits the token budget, and the characters follow the tokens'
// measured ratio rather than squeezing the other tools' descriptions.
const CharBudget = 14500

// tool is one entry of the OpenAI `tools` array as Open WebUI sends it.
type tool struct {
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// toolPayload ports Open WebUI's convert_openapi_to_tool_payload (backend/open_webui/utils/
// tools.py): one tool per operation with an operationId; description, else summary; the
// parameters are the resolved request body schema's properties and required list.
func toolPayload(t *testing.T, specJSON []byte) []tool {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(specJSON, &doc); err != nil {
		t.Fatal(err)
	}
	components, _ := doc["components"].(map[string]any)
	paths, _ := doc["paths"].(map[string]any)
	names := make([]string, 0, len(paths))
	for p := range paths {
		names = append(names, p)
	}
	sort.Strings(names)
	var tools []tool
	for _, p := range names {
		methods, _ := paths[p].(map[string]any)
		for _, m := range []string{"get", "post", "put", "patch", "delete"} {
			op, ok := methods[m].(map[string]any)
			if !ok || op["operationId"] == nil {
				continue
			}
			desc, ok := op["description"].(string)
			if !ok {
				desc, ok = op["summary"].(string)
				if !ok {
					desc = "No description available."
				}
			}
			params := map[string]any{"type": "object", "properties": map[string]any{}, "required": []any{}}
			if body, ok := op["requestBody"].(map[string]any); ok {
				content, _ := body["content"].(map[string]any)
				js, _ := content["application/json"].(map[string]any)
				if schema, ok := js["schema"].(map[string]any); ok {
					resolved := resolve(schema, components).(map[string]any)
					if props, ok := resolved["properties"].(map[string]any); ok && len(props) > 0 {
						params["properties"] = props
						if req, ok := resolved["required"]; ok {
							params["required"] = req
						}
					}
				}
			}
			tools = append(tools, tool{Type: "function", Function: toolFunction{
				Name: op["operationId"].(string), Description: desc, Parameters: params,
			}})
		}
	}
	return tools
}

// resolve inlines $ref pointers into components, as Open WebUI's resolve_schema does.
func resolve(v any, components map[string]any) any {
	switch s := v.(type) {
	case map[string]any:
		if ref, ok := s["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			schemas, _ := components["schemas"].(map[string]any)
			return resolve(schemas[name], components)
		}
		out := make(map[string]any, len(s))
		for k, x := range s {
			out[k] = resolve(x, components)
		}
		return out
	case []any:
		out := make([]any, len(s))
		for i, x := range s {
			out[i] = resolve(x, components)
		}
		return out
	default:
		return v
	}
}

// TestModelFacingBudget measures the spec the way the model receives it and fails above the
// budget, printing every tool's share so the next change knows where the tokens go.
func TestModelFacingBudget(t *testing.T) {
	tools := toolPayload(t, spec(t))
	if len(tools) == 0 {
		t.Fatal("no tools in the spec")
	}
	count := tokenCounter(t)
	type share struct {
		name          string
		tokens, chars int
	}
	shares := make([]share, 0, len(tools))
	for _, tl := range tools {
		n, c := count(tl)
		shares = append(shares, share{tl.Function.Name, n, c})
	}
	sort.Slice(shares, func(i, j int) bool { return shares[i].tokens > shares[j].tokens })
	var b strings.Builder
	for _, s := range shares {
		b.WriteString(fmt.Sprintf("  %-32s %4d tokens %5d chars\n", s.name, s.tokens, s.chars))
	}
	total, chars := count(tools)
	t.Logf("%d tools: %d tokens, %d characters (budget %d tokens, %d characters)\n%s",
		len(tools), total, chars, TokenBudget, CharBudget, b.String())
	if total > TokenBudget {
		t.Errorf("the tool spec costs %d tokens, over the budget of %d: squeeze descriptions (move detail to a shed_help guide)", total, TokenBudget)
	}
	if chars > CharBudget {
		t.Errorf("the tool spec is %d characters, over the budget of %d", chars, CharBudget)
	}
}

// tokenCounter returns a function that counts the o200k tokens and the bytes of a value's
// JSON (what a model is sent).
func tokenCounter(t *testing.T) func(v any) (tokens, bytes int) {
	t.Helper()
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	return func(v any) (int, int) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		ids, _, err := enc.Encode(string(b))
		if err != nil {
			t.Fatal(err)
		}
		return len(ids), len(b)
	}
}
