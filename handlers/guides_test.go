package handlers_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// call matches a tool call written in a guide: shed_name(arguments).
var call = regexp.MustCompile(`\b(shed_[a-z_]+)\(([^()]*)\)`)

// argName matches an argument's name: at the start or after a comma, followed by = or the end
// of the argument (positional names such as `zone, path`).
var argName = regexp.MustCompile(`(?:^|,)\s*([a-z_]+)\s*(?:=\s*("[^"]*"|\[[^\]]*\]|[^,]*))?`)

// TestGuidesCallRealTools: every shed_*(...) call in a guide names a model-facing tool with
// arguments that tool has, and every quoted value of an argument with an enum (action,
// position, ...) is one of its values — so the guides cannot drift from the spec.
func TestGuidesCallRealTools(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	var doc struct {
		Paths map[string]struct {
			Post struct {
				RequestBody struct {
					Content map[string]struct {
						Schema schema `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			} `json:"post"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]schema `json:"schemas"`
		} `json:"components"`
	}
	e.spec(&doc)
	files, err := filepath.Glob("../tools/info/guides/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no guides: %v", err)
	}
	calls := 0
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(text), -1) {
			calls++
			where := filepath.Base(f) + ": " + m[0]
			item, ok := doc.Paths["/"+m[1]]
			if !ok {
				t.Errorf("%s: %s is not a model-facing tool", where, m[1])
				continue
			}
			s := item.Post.RequestBody.Content["application/json"].Schema
			if s.Ref != "" {
				s = doc.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]
			}
			for _, a := range argName.FindAllStringSubmatch(m[2], -1) {
				name, value := a[1], strings.TrimSpace(a[2])
				p, ok := s.Properties[name]
				if !ok {
					if name != "" {
						t.Errorf("%s: %s has no argument %q", where, m[1], name)
					}
					continue
				}
				if len(p.Enum) > 0 && strings.HasPrefix(value, `"`) && !strings.Contains(value, "...") {
					v := strings.Trim(value, `"`)
					found := false
					for _, x := range p.Enum {
						found = found || x == v
					}
					if !found {
						t.Errorf("%s: %s=%s is not one of %v", where, name, value, p.Enum)
					}
				}
			}
		}
	}
	if calls < 20 {
		t.Fatalf("only %d calls found in the guides: is the pattern right?", calls)
	}
}

// schema is the part of a JSON schema the guide check reads.
type schema struct {
	Ref        string `json:"$ref"`
	Properties map[string]struct {
		Enum []any `json:"enum"`
	} `json:"properties"`
}

// An unknown guide answers INVALID_PARAMETER listing the guides.
func TestHelpUnknownGuideListsTopics(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.post("shed_help", map[string]any{"howto": "nope"}, nil)
	wantError(t, r, "INVALID_PARAMETER")
	if !strings.Contains(r.raw, "large_files") {
		t.Fatalf("the answer should list the guides: %s", r.raw)
	}
}

// hintCall matches a tool named in a hint written in core: shed_name, maybe with arguments.
var hintCall = regexp.MustCompile(`\bshed_[a-z_]+\b`)

// TestHintsNameModelFacingTools: the hints in core (WithHint texts and the default hints of
// every code) name only tools the model can call — a merged tool's original name (a route
// the model does not see) would send it nowhere.
func TestHintsNameModelFacingTools(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	e.spec(&doc)
	var files []string
	_ = filepath.WalkDir("../core", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatal("no core sources")
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		codes := strings.HasPrefix(filepath.Base(f), "codes")
		for i, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") || !(strings.Contains(line, "Hint") || codes && strings.Contains(line, `"`)) {
				continue
			}
			for _, name := range hintCall.FindAllString(line, -1) {
				checked++
				if doc.Paths["/"+name] == nil {
					t.Errorf("%s:%d: the hint names %s, which the model does not see", filepath.Base(f), i+1, name)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d tool names found in hints: is the scan right?", checked)
	}
}

// contractGuides are the shed_help topics of the contract (reference §5, shed_help) plus ours.
var contractGuides = []string{"download", "upload", "share", "edit", "commands", "network", "paths",
	"large_files", "history", "groups", "archives", "csv_to_sqlite", "full"}

// Every guide of the contract answers, and the quick reference lists it.
func TestEveryContractGuideAnswers(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	quick := e.post("shed_help", map[string]any{"howto": ""}, nil)
	wantOK(t, quick)
	for _, topic := range contractGuides {
		r := e.post("shed_help", map[string]any{"howto": topic}, nil)
		wantOK(t, r)
		if help, _ := r.Data["help"].(string); len(help) < 200 {
			t.Errorf("guide %s: %q", topic, help)
		}
		if topic != "full" && !strings.Contains(quick.raw, topic) {
			t.Errorf("the quick reference does not mention the guide %s", topic)
		}
	}
}

// Every tool a guide names, called or not, is model-facing — except on a line that says the
// original names are routes (the guides map them to the merged tools).
func TestGuidesNameModelFacingTools(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	e.spec(&doc)
	files, _ := filepath.Glob("../tools/info/guides/*.md")
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			if strings.Contains(line, "routes") || strings.Contains(line, "original tool") || strings.HasPrefix(line, "| `") {
				continue // the mapping of original names to the merged tools
			}
			for _, name := range hintCall.FindAllString(line, -1) {
				if doc.Paths["/"+name] == nil {
					t.Errorf("%s:%d names %s, which the model does not see", filepath.Base(f), i+1, name)
				}
			}
		}
	}
}
