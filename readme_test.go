package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/handlers"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the generated tables of README.md")

// valvesTable renders the README's configuration table from valves.yaml, so the file that
// documents every valve is also the only source of the README's table.
func valvesTable(yaml []byte) string {
	var b strings.Builder
	b.WriteString("| valve | environment | default | what it does |\n| --- | --- | --- | --- |\n")
	var comment []string
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(yaml))
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			comment = nil
		case strings.HasPrefix(trimmed, "#"):
			comment = append(comment, strings.TrimSpace(strings.TrimPrefix(trimmed, "#")))
		default:
			key, value, _ := strings.Cut(trimmed, ":")
			value = strings.TrimSpace(value)
			indented := strings.HasPrefix(line, " ")
			if !indented {
				section = ""
			}
			if value == "" { // a section header
				section = key + "."
				comment = nil
				continue
			}
			name := key
			if indented {
				name = section + key
			}
			env := "FILESHED_" + strings.ToUpper(strings.ReplaceAll(name, ".", "_"))
			desc := strings.ReplaceAll(strings.Join(comment, " "), "|", "\\|")
			fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s |\n", name, env, value, desc)
			comment = nil
		}
	}
	return b.String()
}

// TestReadmeValvesTable keeps README.md's valves table equal to valves.yaml
// (go test . -update-readme rewrites it).
func TestReadmeValvesTable(t *testing.T) {
	checkReadmeSection(t, "valves", valvesTable(defaultValves))
}

// TestReadmeOperationsTable keeps README.md's list of tools equal to the spec the model
// sees: every model-facing tool with its description, and the original tools a merged tool
// stands for (they stay routes of their own).
func TestReadmeOperationsTable(t *testing.T) {
	checkReadmeSection(t, "operations", operationsTable(t))
}

func operationsTable(t *testing.T) string {
	t.Helper()
	paths := modelSpec(t).Paths
	names := make([]string, 0, len(paths))
	for p := range paths {
		names = append(names, p)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| tool | what it does |\n| --- | --- |\n")
	for _, p := range names {
		op := paths[p].Post
		desc := strings.ReplaceAll(op.Description, "|", "\\|")
		if actions, ok := op.Extensions["x-fileshed-actions"].([]map[string]string); ok {
			parts := make([]string, 0, len(actions))
			for _, a := range actions {
				parts = append(parts, fmt.Sprintf("`%s` (`%s`)", a["action"], a["tool"]))
			}
			desc += "<br>actions: " + strings.Join(parts, ", ")
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", op.OperationID, desc)
	}
	return b.String()
}

// modelSpec is the OpenAPI document the model sees, with the embedded defaults.
func modelSpec(t *testing.T) *huma.OpenAPI {
	t.Helper()
	cfg, _, err := valves.Load(defaultValves, nil, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return handlers.Spec(cfg).OpenAPI()
}

// checkReadmeSection compares the text between README.md's <!-- name:start --> and
// <!-- name:end --> markers with want, and rewrites it under -update-readme.
func checkReadmeSection(t *testing.T, name, want string) {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	start, end := "<!-- "+name+":start -->\n", "<!-- "+name+":end -->"
	i, j := bytes.Index(readme, []byte(start)), bytes.Index(readme, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %s markers", name)
	}
	if string(readme[i+len(start):j]) == want {
		return
	}
	if *updateReadme {
		out := append(append(append([]byte{}, readme[:i+len(start)]...), want...), readme[j:]...)
		if err := os.WriteFile("README.md", out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("README.md's %s table differs from the source: run go test . -update-readme", name)
}

// TestReadmeNamesRealVariables: every FILESHED_* variable the README names is one the server
// reads, except the README's examples of a typo, which the start-up warning names with the
// setting the README says it suggests.
func TestReadmeNamesRealVariables(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := valves.Load(defaultValves, nil, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	typos := map[string]bool{}
	for _, m := range regexp.MustCompile("`(FILESHED_\\w+)` → did you mean `(FILESHED_\\w+)`\\?").FindAllStringSubmatch(string(readme), -1) {
		typos[m[1]] = true
		if w := cfg.Warnings([]string{m[1] + "=1"}); len(w) != 1 || !strings.Contains(w[0], "did you mean "+m[2]+"?") {
			t.Errorf("the README says %s suggests %s; the warning is %q", m[1], m[2], w)
		}
	}
	if len(typos) == 0 {
		t.Error("the README shows no example of the unknown-variable warning")
	}
	// FILESHED_ENC_V1 is the original Fileshed's encryption header (import-original), not a variable.
	notVariables := map[string]bool{"FILESHED_ENC_V1": true}
	for _, name := range regexp.MustCompile(`FILESHED_[A-Z0-9][A-Z0-9_]*`).FindAllString(string(readme), -1) {
		if w := cfg.Warnings([]string{name + "=1"}); !typos[name] && !notVariables[name] && len(w) > 0 {
			t.Errorf("the README names %s, which the server does not read: %s", name, w[0])
		}
	}
}

// readmeSection is the text between README.md's <!-- name:start --> and <!-- name:end -->.
func readmeSection(t *testing.T, name string) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "<!-- "+name+":start -->\n")
	text, _, ok2 := strings.Cut(after, "<!-- "+name+":end -->")
	if !ok || !ok2 {
		t.Fatalf("README.md lacks the %s markers", name)
	}
	return text
}

// call is a tool call as the README writes it: shed_x(name="value", n=48, list=["a"]).
type call struct {
	tool   string
	args   map[string]string // values, quotes removed
	quoted map[string]bool   // the values written as strings
}

var (
	toolName = regexp.MustCompile(`shed_[a-z_]+`)
	argName  = regexp.MustCompile(`^[a-z_]+$`)
)

// parseCalls finds every tool name in text, with the arguments of the call where "(" follows.
func parseCalls(text string) ([]call, error) {
	var out []call
	for _, m := range toolName.FindAllStringIndex(text, -1) {
		c := call{tool: text[m[0]:m[1]], args: map[string]string{}, quoted: map[string]bool{}}
		if rest := text[m[1]:]; strings.HasPrefix(rest, "(") {
			if err := c.parseArgs(rest[1:]); err != nil {
				return nil, fmt.Errorf("%s(%.40s: %w", c.tool, rest[1:], err)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// parseArgs reads `name=value, ...)`: a value is a "string" or runs to the next , or ) outside
// brackets (a number, a list, a placeholder such as …).
func (c *call) parseArgs(s string) error {
	for {
		s = strings.TrimLeft(s, " \n")
		if strings.HasPrefix(s, ")") {
			return nil
		}
		name, rest, ok := strings.Cut(s, "=")
		if !ok || !argName.MatchString(name) {
			return fmt.Errorf("want name=value")
		}
		s = rest
		var value string
		if strings.HasPrefix(s, `"`) {
			end := 1
			for end < len(s) && (s[end] != '"' || s[end-1] == '\\') {
				end++
			}
			if end == len(s) {
				return fmt.Errorf("unterminated string")
			}
			value, s, c.quoted[name] = s[1:end], s[end+1:], true
		} else {
			depth, end := 0, 0
			for ; end < len(s) && (depth > 0 || s[end] != ',' && s[end] != ')'); end++ {
				switch s[end] {
				case '[', '{', '(':
					depth++
				case ']', '}', ')':
					depth--
				}
			}
			value, s = strings.TrimSpace(s[:end]), s[end:]
		}
		c.args[name] = value
		s = strings.TrimLeft(s, " \n")
		switch {
		case strings.HasPrefix(s, ","):
			s = s[1:]
		case strings.HasPrefix(s, ")"):
			return nil
		default:
			return fmt.Errorf("want , or ) after %s", name)
		}
	}
}

// inputSchema is the request schema of a model-facing tool, nil when the spec has no such tool.
func inputSchema(spec *huma.OpenAPI, tool string) *huma.Schema {
	item := spec.Paths["/"+tool]
	if item == nil || item.Post == nil || item.Post.RequestBody == nil {
		return nil
	}
	s := item.Post.RequestBody.Content["application/json"].Schema
	if s.Ref != "" {
		s = spec.Components.Schemas.Map()[strings.TrimPrefix(s.Ref, "#/components/schemas/")]
	}
	return s
}

// checkCall reports what in c the model could not send: a tool the spec does not offer, an
// argument the tool does not take, a string outside the argument's enum ("…" stands for any).
func checkCall(spec *huma.OpenAPI, c call) error {
	s := inputSchema(spec, c.tool)
	if s == nil {
		return fmt.Errorf("%s is not a tool of the spec", c.tool)
	}
	for name, value := range c.args {
		p := s.Properties[name]
		if p == nil {
			return fmt.Errorf("%s has no argument %s", c.tool, name)
		}
		if c.quoted[name] && len(p.Enum) > 0 && value != "…" && !slices.Contains(p.Enum, any(value)) {
			return fmt.Errorf("%s(%s=%q): not one of %v", c.tool, name, value, p.Enum)
		}
	}
	return nil
}

// commitRow is a row of the README's table of default commit messages.
type commitRow struct {
	cell         string // the call column, e.g. shed_transfer(action="to_group")
	call         call
	template     string // the first code span of the message column: `<name>` is an argument
	takesMessage bool
}

// commitRows reads the README's table of default commit messages.
func commitRows(t *testing.T) []commitRow {
	t.Helper()
	code := regexp.MustCompile("`([^`]*)`")
	var rows []commitRow
	for _, line := range strings.Split(readmeSection(t, "commits"), "\n") {
		cols := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cols) != 3 || !strings.HasPrefix(cols[0], "`shed_") {
			continue
		}
		cell := strings.Trim(cols[0], "`")
		calls, err := parseCalls(cell)
		tmpl := code.FindStringSubmatch(cols[1])
		if err != nil || len(calls) != 1 || tmpl == nil || (cols[2] != "yes" && cols[2] != "no") {
			t.Fatalf("README commit table: cannot read %q (%v)", line, err)
		}
		rows = append(rows, commitRow{cell: cell, call: calls[0], template: tmpl[1], takesMessage: cols[2] == "yes"})
	}
	if len(rows) == 0 {
		t.Fatal("README commit table: no row")
	}
	return rows
}

// TestReadmeExampleCallsMatchSpec: every call in the example conversations and in the commit
// message table names a tool the model sees, with arguments it takes and values it accepts;
// the table says truly which tools take a commit message.
func TestReadmeExampleCallsMatchSpec(t *testing.T) {
	spec := modelSpec(t)
	calls, err := parseCalls(readmeSection(t, "examples"))
	if err != nil || len(calls) == 0 {
		t.Fatalf("README examples: %d calls, %v", len(calls), err)
	}
	for _, r := range commitRows(t) {
		calls = append(calls, r.call)
		if s := inputSchema(spec, r.call.tool); s != nil && (s.Properties["message"] != nil) != r.takesMessage {
			t.Errorf("README commit table: %s takes message: %v, the spec says %v", r.cell, r.takesMessage, !r.takesMessage)
		}
	}
	for _, c := range calls {
		if err := checkCall(spec, c); err != nil {
			t.Errorf("README: %v", err)
		}
	}
}
