package valves

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlTypeError is one line of yaml's type errors: "line 3: cannot unmarshal !!str `x` into int".
var yamlTypeError = regexp.MustCompile("^line (\\d+): cannot unmarshal !!\\w+ `(.*)` into (.+)$")

// humanTypeErrors rewrites yaml's type errors for an operator: the key at that line and the
// kind of value it takes, instead of Go's type names ("into []string"). Other errors pass.
func humanTypeErrors(data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	keys := keysByLine(data)
	lines := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		m := yamlTypeError.FindStringSubmatch(e)
		if m == nil {
			lines = append(lines, e)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		where := "line " + m[1]
		if k := keys[n]; k != "" {
			where += " (" + k + ")"
		}
		lines = append(lines, fmt.Sprintf("%s: %q is not %s", where, m[2], kindOf(m[3])))
	}
	return errors.New("wrong kind of value:\n  " + strings.Join(lines, "\n  "))
}

// kindOf names a Go type as the value a YAML key takes.
func kindOf(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list (e.g. [\"a\", \"b\"])"
	case strings.HasPrefix(goType, "map["):
		return "a map (key: value lines)"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "string":
		return "text"
	}
	return "a value of the expected kind (see valves.yaml)"
}

// keysByLine maps each line of the YAML document data that holds a key to its dotted name
// ("cors.allowed_origins"); nil when data does not parse.
func keysByLine(data []byte) map[int]string {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	keys := map[int]string{}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			name := prefix + k.Value
			keys[k.Line] = name
			if v.Line != k.Line {
				for j := v.Line; j <= lastLine(v); j++ {
					if _, ok := keys[j]; !ok {
						keys[j] = name
					}
				}
			}
			walk(v, name+".")
		}
	}
	walk(doc.Content[0], "")
	return keys
}

// lastLine is the last line a node's content starts on.
func lastLine(n *yaml.Node) int {
	last := n.Line
	for _, c := range n.Content {
		last = max(last, lastLine(c))
	}
	return last
}
