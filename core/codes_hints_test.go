package core

import (
	"regexp"
	"testing"
)

// nextStep matches a hint that names what to do next: a tool, an argument (name=... or
// name='...'), a valve or variable an administrator sets, or Open WebUI's setting.
var nextStep = regexp.MustCompile(`shed_[a-z_]+|\b[a-z_]+=|FILESHED_|administrator|Open WebUI|usage|details\.`)

// TestDefaultHintsNameTheNextStep: every code's default hint tells the model (or the
// operator) which tool, argument or setting to use next, not only that something failed.
func TestDefaultHintsNameTheNextStep(t *testing.T) {
	t.Parallel()
	for _, c := range Codes() {
		if h := defaultHint(c); !nextStep.MatchString(h) {
			t.Errorf("%s: hint %q names no tool, argument or setting", c, h)
		}
	}
}
