package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/fileshed/fileshed/handlers"
)

// TestChangelogNamesTheVersion keeps CHANGELOG.md's newest release equal to the version the
// server announces (handlers.Version, printed by fileshed version): a release commit changes
// both, and its tag is v + that version.
func TestChangelogNamesTheVersion(t *testing.T) {
	text, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$`).FindSubmatch(text)
	if m == nil {
		t.Fatal("CHANGELOG.md has no release entry (## [MAJOR.MINOR.PATCH] - YYYY-MM-DD)")
	}
	if string(m[1]) != handlers.Version {
		t.Fatalf("CHANGELOG.md's newest release is %s, handlers.Version is %s", m[1], handlers.Version)
	}
}
