package sandbox

import (
	"fmt"
	"strings"
)

// ZoneKind says which whitelist applies: uploads are ReadOnly, every other zone
// (storage, documents, group, an editzone copy) is ReadWrite.
type ZoneKind int

// Zone kinds.
const (
	ReadOnly ZoneKind = iota
	ReadWrite
)

// operandKind says what the non-option arguments of a command are.
type operandKind int

const (
	// paths: every operand names a file and is confined.
	paths operandKind = iota
	// script: the first operand is a program or pattern (not a path) unless an option
	// marked "*" supplied it; the rest are paths.
	script
	// words: operands are plain strings the tool never opens (echo, seq, basename).
	words
	// firstPath: only the first operand is a path (sqlite3 DB, csplit FILE);
	// the rest are SQL, patterns or sizes.
	firstPath
)

// optKind is what an option does with its value.
type optKind int

const (
	flag       optKind = iota // no value
	value                     // a value that is not a file
	pathValue                 // a value that names a file: confined
	optPath                   // an optional value, attached only ("-o[FILE]", "--x[=FILE]"): confined
	value2                    // two separate values, neither a file (jq --arg NAME VALUE)
	value2Path                // two separate values, the second a file (jq --rawfile NAME FILE)
	forbidden                 // refused in every form
)

// opt is one option of a command's table.
type opt struct {
	kind   optKind
	script bool // the value is the program/pattern: the first operand is then a path
}

// cmdRule is the whole policy of one command. See policy.go for the data.
type cmdRule struct {
	rw         bool     // only in read-write zones
	net        bool     // network client: governed by network_mode
	bin        string   // executable to run when it differs from the name (awk -> gawk)
	missing    string   // what to say when bin is not installed (default: not found)
	force      []string // flags inserted right after the executable
	opts       string   // option table (see parseOpts)
	writes     string   // options (names of opts) that write: refused in read-only zones
	operands   operandKind
	dashDash   bool                                                                          // the tool understands "--": options first, "--", then operands
	keepOrder  bool                                                                          // do not reorder (option position matters, e.g. tar -C)
	longSingle bool                                                                          // long options take one dash (sqlite3 -cmd): "-x" is looked up as "--x"
	needsOp    bool                                                                          // at least one operand is required (stdin is /dev/null)
	helpers    []string                                                                      // other executables the tool legitimately runs (Landlock execute)
	preparse   func(c *cmdRule, args []string, r Request) (prefix, rest []string, err error) // before parse
	check      func(c *cmdRule, p *parsed, r Request) error                                  // after parse
	table      map[string]opt                                                                // parsed opts, filled by init
	longs      []string                                                                      // long names in table, for abbreviations
}

// parseOpts reads an option table: space-separated tokens, each an option name with
// an optional prefix and suffix:
//
//	-x / --long      flag
//	-x: / --long:    takes a value that is not a path
//	-x= / --long=    takes a value that is a path (confined)
//	-x?= / --long?=  optional attached path value ("-o[FILE]", "--dump[=FILE]")
//	!-x / !--long    forbidden (also every abbreviation and attached form)
//	*-e: / *-f=      the value is the script/pattern (first operand becomes a path)
//	--arg::          two separate values, neither a path
//	--rawfile:=      two separate values, the second a path
func parseOpts(spec string) (map[string]opt, []string, error) {
	table := map[string]opt{}
	var longs []string
	for _, tok := range strings.Fields(spec) {
		var o opt
		if strings.HasPrefix(tok, "!") {
			o.kind, tok = forbidden, tok[1:]
		}
		if strings.HasPrefix(tok, "*") {
			o.script, tok = true, tok[1:]
		}
		switch {
		case len(tok) <= 2: // "-:" (curl --next) and "-^" are option letters, not suffixes
		case strings.HasSuffix(tok, "::"):
			o.kind, tok = value2, strings.TrimSuffix(tok, "::")
		case strings.HasSuffix(tok, ":="):
			o.kind, tok = value2Path, strings.TrimSuffix(tok, ":=")
		case strings.HasSuffix(tok, "?="):
			o.kind, tok = optPath, strings.TrimSuffix(tok, "?=")
		case strings.HasSuffix(tok, "="):
			o.kind, tok = pathValue, strings.TrimSuffix(tok, "=")
		case strings.HasSuffix(tok, ":"):
			o.kind, tok = value, strings.TrimSuffix(tok, ":")
		}
		if !strings.HasPrefix(tok, "-") || tok == "-" || tok == "--" {
			return nil, nil, fmt.Errorf("bad option token %q", tok)
		}
		if !strings.HasPrefix(tok, "--") && len(tok) != 2 {
			return nil, nil, fmt.Errorf("short option %q must be one letter", tok)
		}
		if o.kind == forbidden && o.script {
			return nil, nil, fmt.Errorf("forbidden option %q cannot be a script option", tok)
		}
		if _, dup := table[tok]; dup {
			return nil, nil, fmt.Errorf("duplicate option %q", tok)
		}
		table[tok] = o
		if strings.HasPrefix(tok, "--") {
			longs = append(longs, tok)
		}
	}
	return table, longs, nil
}

// lookupLong finds the option a user's "--name" refers to, with GNU getopt_long
// abbreviation semantics made conservative: an exact match wins; otherwise every
// declared option that starts with name is a candidate, and the most dangerous
// candidate decides (so "--checkpoint-ac" is "--checkpoint-action", and an
// ambiguous prefix of a forbidden option is refused rather than guessed).
func (c *cmdRule) lookupLong(name string) (string, opt, bool) {
	if o, ok := c.table[name]; ok {
		return name, o, true
	}
	best, bestName, found := opt{}, "", false
	for _, l := range c.longs {
		if strings.HasPrefix(l, name) && len(name) > 2 {
			o := c.table[l]
			if !found || danger(o) > danger(best) {
				best, bestName, found = o, l, true
			}
		}
	}
	return bestName, best, found
}

// danger orders option kinds from harmless to refused.
func danger(o opt) int {
	switch o.kind {
	case forbidden:
		return 4
	case pathValue, value2Path:
		return 3
	case optPath:
		return 2
	case value, value2:
		return 1
	}
	return 0
}
