package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
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
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "<!-- valves:start -->\n", "<!-- valves:end -->"
	i, j := bytes.Index(readme, []byte(start)), bytes.Index(readme, []byte(end))
	if i < 0 || j < i {
		t.Fatal("README.md lacks the valves markers")
	}
	want := valvesTable(defaultValves)
	got := string(readme[i+len(start) : j])
	if got == want {
		return
	}
	if *updateReadme {
		out := append(append(append([]byte{}, readme[:i+len(start)]...), want...), readme[j:]...)
		if err := os.WriteFile("README.md", out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("README.md's valves table differs from valves.yaml: run go test . -update-readme")
}
