package valves

import (
	"io"
	"strings"
)

// Report writes the effective configuration, one valve per line in the order of Names:
// "name = value  (source)". Values are JSON; a secret that is set shows as "<redacted>"
// (an empty one stays ""). A valve missing from src is reported as from the default.
func (c *Config) Report(w io.Writer, src Sources) error {
	var b strings.Builder
	for _, v := range all {
		from := src[v.name]
		if from == "" {
			from = fromDefault
		}
		b.WriteString(v.name + " = " + v.show(c) + "  (" + from + ")\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
