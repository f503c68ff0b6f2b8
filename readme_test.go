package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

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
	cfg, _, err := valves.Load(defaultValves, nil, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	paths := handlers.Spec(cfg).OpenAPI().Paths
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
