package openapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
)

var update = flag.Bool("update", false, "rewrite testdata/openapi.json")

// spec builds the real handler and returns its OpenAPI 3.1 document.
func spec(t *testing.T) []byte {
	t.Helper()
	defaults, err := os.ReadFile("../valves.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	cfg, _, err := valves.Load(defaults, []string{"--storage-base-path", base}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	_, api, svc, err := handlers.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	b, err := json.MarshalIndent(api.OpenAPI(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func TestGoldenSpec(t *testing.T) {
	got := spec(t)
	if *update {
		if err := os.WriteFile("testdata/openapi.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the OpenAPI document changed: review it and run `go test ./openapi -update`")
	}
	t.Logf("spec size: %d bytes", len(got))
}

// noArgumentsIsAnError lists the tools whose call without arguments is refused anyway (by
// us, or by Open WebUI up to 0.6.32): they need no required argument in the spec.
var noArgumentsIsAnError = map[string]bool{"/shed_import": true} // file_id, filename or import_all

// TestSpecLint enforces the rules Open WebUI and model providers need (DESIGN §2).
func TestSpecLint(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(spec(t), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi version %v", doc["openapi"])
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, child := range x {
				switch k {
				case "$schema", "anyOf", "oneOf", "allOf":
					t.Errorf("%s: forbidden key %q", path, k)
				case "type":
					if _, ok := child.(string); !ok && !strings.HasSuffix(path, "properties") {
						t.Errorf("%s: type must be a single string, got %v", path, child)
					}
				case "additionalProperties":
					if child == false {
						t.Errorf("%s: unknown keys must be allowed", path)
					}
				}
				if x["type"] == "array" && x["items"] == nil {
					t.Errorf("%s: array without items", path)
				}
				if x["nullable"] == true {
					t.Errorf("%s: nullable", path)
				}
				walk(path+"/"+k, child)
			}
		case []any:
			for _, child := range x {
				walk(path, child)
			}
		}
	}
	walk("", doc)
	paths := doc["paths"].(map[string]any)
	for p, item := range paths {
		ops := item.(map[string]any)
		if len(ops) != 1 || ops["post"] == nil {
			t.Errorf("%s: tools are POST only", p)
			continue
		}
		op := ops["post"].(map[string]any)
		if "/"+op["operationId"].(string) != p || !strings.HasPrefix(p, "/shed_") {
			t.Errorf("%s: operationId %v", p, op["operationId"])
		}
		if op["parameters"] != nil {
			t.Errorf("%s: no path/query/header parameters allowed", p)
		}
		// Every tool takes at least one required argument: Open WebUI up to 0.6.32 fails a
		// call without arguments to an operation with a body, and some providers (Gemini)
		// refuse a function whose parameters have no properties.
		rb, ok := op["requestBody"].(map[string]any)
		if !ok {
			t.Errorf("%s: every tool needs a request body with a required argument", p)
			continue
		}
		content := rb["content"].(map[string]any)
		if len(content) != 1 || content["application/json"] == nil {
			t.Errorf("%s: body must be application/json only", p)
			continue
		}
		schema := content["application/json"].(map[string]any)["schema"].(map[string]any)
		if ref, ok := schema["$ref"].(string); ok {
			schema = doc["components"].(map[string]any)["schemas"].(map[string]any)[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		if props, _ := schema["properties"].(map[string]any); len(props) == 0 {
			t.Errorf("%s: no argument", p)
		}
		if req, _ := schema["required"].([]any); len(req) == 0 && !noArgumentsIsAnError[p] {
			t.Errorf("%s: no required argument", p)
		}
		if d, _ := op["description"].(string); d == "" || len(d) > 400 {
			t.Errorf("%s: description must be short and present (%d chars)", p, len(d))
		}
	}
	for _, want := range []string{"/shed_tree", "/shed_help", "/shed_info", "/shed_lockedit"} {
		if paths[want] == nil {
			t.Errorf("missing %s", want)
		}
	}
}
