package sandbox

import (
	"fmt"
	"slices"
	"strings"
)

// Command-specific rules that a plain option table cannot express.

// noPlusCommands refuses less/more "+cmd" operands (initial commands).
func noPlusCommands(_ *cmdRule, p *parsed, r Request) error {
	for _, op := range p.operands {
		if strings.HasPrefix(op, "+") {
			return forbid(op, fmt.Sprintf("Initial commands ('%s') are forbidden for %s", op, r.Cmd), "Give only file names")
		}
	}
	return nil
}

// checkSed refuses an in-place backup suffix that is a path: GNU sed treats a suffix
// containing "/" as a directory template ("-i../../x/*" writes outside).
func checkSed(_ *cmdRule, p *parsed, _ Request) error {
	return suffixWithoutSlash(p, "-i", "--in-place")
}

// checkSuffixes builds a check refusing "/" in the values of the given suffix options
// (a backup or output suffix with "/" turns "f" + suffix into another directory).
func checkSuffixes(names ...string) func(*cmdRule, *parsed, Request) error {
	return func(_ *cmdRule, p *parsed, _ Request) error { return suffixWithoutSlash(p, names...) }
}

func suffixWithoutSlash(p *parsed, names ...string) error {
	for _, o := range p.opts {
		if slices.Contains(names, o.name) && strings.ContainsRune(o.val, '/') {
			return forbid(o.val, fmt.Sprintf("Suffix '%s' of %s must not contain '/'", o.val, o.name), "Use a plain suffix such as '.bak'")
		}
	}
	return nil
}

// checkUniq: "uniq IN OUT" writes OUT, which a read-only zone refuses.
func checkUniq(c *cmdRule, p *parsed, r Request) error { return checkSecondOperandWrites(c, p, r) }

// checkSecondOperandWrites refuses an output operand (uniq IN OUT, xxd IN OUT, pdftotext
// IN OUT) other than "-" (stdout) in a read-only zone; in other zones it is confined like
// every operand.
func checkSecondOperandWrites(_ *cmdRule, p *parsed, r Request) error {
	if r.Kind == ReadOnly && len(p.operands) > 1 && p.operands[1] != "-" {
		return forbid(p.operands[1], fmt.Sprintf("%s would write '%s': forbidden in a read-only zone", r.Cmd, p.operands[1]),
			"This zone is read-only; copy the file to storage first")
	}
	return nil
}

// checkResponseFiles confines binutils "@FILE" operands (options read from FILE).
func checkResponseFiles(_ *cmdRule, p *parsed, r Request) error {
	for _, op := range p.operands {
		if rest, ok := strings.CutPrefix(op, "@"); ok {
			if err := confine(r, rest); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSqlite refuses URI database names (file:/abs?...) and opens the database
// read-only in a read-only zone.
func checkSqlite(_ *cmdRule, p *parsed, r Request) error {
	if len(p.operands) > 0 && strings.HasPrefix(strings.ToLower(p.operands[0]), "file:") {
		return forbid(p.operands[0], "URI database names are forbidden", "Give the database as a plain path, e.g. data.db")
	}
	if r.Kind == ReadOnly {
		p.prefix = append(p.prefix, "-readonly")
	}
	return nil
}

// checkZip refuses -T and -TT (zip tests the archive by running an unzip command
// line through a shell) in any single-dash cluster.
func checkZip(_ *cmdRule, p *parsed, _ Request) error {
	for _, a := range p.raw {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'T') {
			return forbid(a, "zip -T/-TT runs a command", "Test archives with unzip -t instead")
		}
	}
	return nil
}

// checkUnzip: in a read-only zone only listing/testing/printing modes are allowed.
func checkUnzip(_ *cmdRule, p *parsed, r Request) error {
	if r.Kind == ReadOnly && !p.has("-l", "-v", "-t", "-Z", "-p", "-z") {
		return forbid("unzip", "unzip would extract into a read-only zone", "Use unzip -l to list, or extract into storage")
	}
	return nil
}

// checkInstall refuses set-user-id, set-group-id and sticky modes.
func checkInstall(_ *cmdRule, p *parsed, _ Request) error {
	for _, o := range p.opts {
		if o.name != "-m" && o.name != "--mode" {
			continue
		}
		v := o.val
		special := strings.ContainsAny(v, "st")
		if !special && len(v) >= 4 && v[0] >= '0' && v[0] <= '9' {
			special = v[len(v)-4] != '0'
		}
		if special {
			return forbid(v, "Set-user-id, set-group-id and sticky modes are forbidden", "Use a plain mode such as 644 or 755")
		}
	}
	return nil
}

// checkAwk refuses @include and @load in program text: gawk --sandbox still reads
// any file named by @include as source (its lines come back in syntax errors),
// which only Landlock would stop. Program files given with -f are confined to the
// zone but not read here.
func checkAwk(_ *cmdRule, p *parsed, _ Request) error {
	var programs []string
	if !p.scriptGiven && len(p.operands) > 0 {
		programs = append(programs, p.operands[0])
	}
	for _, o := range p.opts {
		if o.name == "-e" || o.name == "--source" {
			programs = append(programs, o.val)
		}
	}
	for _, prog := range programs {
		for _, d := range []string{"@include", "@load"} {
			if strings.Contains(prog, d) {
				return forbid(d, fmt.Sprintf("awk %s reads another file as program: forbidden", d),
					"Put the whole program in the argument (or in a file given with -f)")
			}
		}
	}
	return nil
}
