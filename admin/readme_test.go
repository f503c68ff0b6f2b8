package admin

import (
	"os"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestReadmeListsEveryCommand keeps README.md's Administration table complete: every
// `fileshed admin` command has a row that starts with its name.
func TestReadmeListsEveryCommand(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	parser, err := kong.New(&cli{}, kong.Name("fileshed admin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, leaf := range parser.Model.Leaves(true) {
		var words []string
		for n := leaf; n != nil && n.Type == kong.CommandNode; n = n.Parent {
			words = append([]string{n.Name}, words...)
		}
		if cmd := strings.Join(words, " "); !strings.Contains(string(readme), "`"+cmd) {
			t.Errorf("README.md's Administration table lacks `%s`", cmd)
		}
	}
}
