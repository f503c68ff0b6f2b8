package valves

import (
	"strings"
	"testing"
)

// TestTypeErrorsNameTheKeyAndTheKind (issue 33 item 11): a value of the wrong kind names the
// key and the kind of value it takes, never Go's type names ("into []string").
func TestTypeErrorsNameTheKeyAndTheKind(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"quota_per_user_mb: lots\n", `line 1 (quota_per_user_mb): "lots" is not a whole number`},
		{"cors:\n  allowed_origins: \"x\"\n", `line 2 (cors.allowed_origins): "x" is not a list`},
		{"sqlite_readonly: maybe\n", `line 1 (sqlite_readonly): "maybe" is not true or false`},
	} {
		err := overlay(&Config{}, Sources{}, []byte(c.yaml), "config file f.yaml", "file")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "[]string") || strings.Contains(err.Error(), "into int")) {
			t.Errorf("%q: Go's type names in %v", c.yaml, err)
		}
	}
}
