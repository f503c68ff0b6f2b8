package sandbox

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// parsed is a command line split by the rule's option table.
type parsed struct {
	prefix      []string // inserted before the user's arguments (git hardening)
	opts        []popt
	operands    []string
	raw         []string // the arguments as given (after preparse), for keepOrder
	scriptGiven bool     // an option supplied the script/pattern
	network     bool     // this invocation needs the network (git fetch...)
}

// popt is one option occurrence: canonical name, its value, and its raw tokens.
type popt struct {
	name   string
	val    string
	hasVal bool
	raw    []string
}

// has reports whether any of names occurred.
func (p *parsed) has(names ...string) bool {
	for _, o := range p.opts {
		if slices.Contains(names, o.name) {
			return true
		}
	}
	return false
}

// argv renders the checked arguments: options first, "--", operands (GNU tools
// permute, so this is the same command line, with operands that can no longer be
// read as options).
func (p *parsed) argv(c *cmdRule) []string {
	if c.keepOrder {
		return p.raw
	}
	var out []string
	for _, o := range p.opts {
		out = append(out, o.raw...)
	}
	if c.dashDash && len(p.operands) > 0 {
		out = append(out, "--")
	}
	return append(out, p.operands...)
}

// parse splits args with GNU getopt_long semantics (clustered short options,
// attached or separate values, "--opt=value", unique-prefix abbreviations, "--"),
// refusing forbidden options and confining every value and operand that names a file.
func parse(c *cmdRule, args []string, r Request) (*parsed, error) {
	p := &parsed{raw: args}
	endOpts := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if endOpts || a == "-" || !strings.HasPrefix(a, "-") {
			p.operands = append(p.operands, a)
			continue
		}
		if a == "--" {
			endOpts = true
			continue
		}
		next := func() (string, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		var err error
		if strings.HasPrefix(a, "--") || c.longSingle {
			err = p.long(c, a, next, r)
		} else {
			err = p.short(c, a, next, r)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := p.confineOperands(c, r); err != nil {
		return nil, err
	}
	if r.Kind == ReadOnly {
		for _, w := range strings.Fields(c.writes) {
			if p.has(w) {
				return nil, forbid(w, fmt.Sprintf("Option %s writes files: forbidden in a read-only zone", w),
					"This zone is read-only; copy the file to storage first")
			}
		}
	}
	if !c.dashDash && !c.keepOrder {
		// Without "--" an operand that starts with "-" would become an unchecked option.
		for _, o := range p.operands {
			if strings.HasPrefix(o, "-") && o != "-" {
				return nil, forbid(o, fmt.Sprintf("Operand '%s' looks like an option", o),
					"Rename the file so it does not start with '-', or prefix it with './'")
			}
		}
	}
	return p, nil
}

// long handles "--name", "--name=value" (and "-name" for longSingle tools).
func (p *parsed) long(c *cmdRule, a string, next func() (string, bool), r Request) error {
	name, val, hasEq := strings.Cut(a, "=")
	if c.longSingle && !strings.HasPrefix(name, "--") {
		name = "-" + name
	}
	canon, o, ok := c.lookupLong(name)
	if c.longSingle && ok && canon != name {
		ok = false // single-dash long options are matched exactly
	}
	po := popt{name: canon, val: val, hasVal: hasEq, raw: []string{a}}
	if !ok {
		// Unknown option: a value that looks like a path is confined anyway.
		po.name = name
		if hasEq && pathLike(val) {
			if err := confine(r, val); err != nil {
				return err
			}
		}
		p.opts = append(p.opts, po)
		return nil
	}
	switch o.kind {
	case forbidden:
		return forbid(a, fmt.Sprintf("Option '%s' is forbidden for %s", canon, r.Cmd), forbiddenHint)
	case value, pathValue:
		if !hasEq {
			v, ok := next()
			if !ok {
				return &Violation{Kind: ArgumentRequired, Arg: a, Reason: fmt.Sprintf("Option '%s' needs a value", a), Hint: "Give the option a value"}
			}
			po.val, po.hasVal, po.raw = v, true, append(po.raw, v)
		}
		if o.kind == pathValue {
			if err := confine(r, po.val); err != nil {
				return err
			}
		}
	case optPath:
		if hasEq {
			if err := confine(r, val); err != nil {
				return err
			}
		}
	case value2, value2Path:
		for k := 0; k < 2; k++ {
			v, ok := next()
			if !ok {
				return &Violation{Kind: ArgumentRequired, Arg: a, Reason: fmt.Sprintf("Option '%s' needs two values", a), Hint: "Give the option its values"}
			}
			po.raw = append(po.raw, v)
			po.val = v
		}
		if o.kind == value2Path {
			if err := confine(r, po.val); err != nil {
				return err
			}
		}
	}
	p.scriptGiven = p.scriptGiven || o.script
	p.opts = append(p.opts, po)
	return nil
}

// short handles a cluster such as "-xvf", "-Igzip", "-n5", "-i.bak".
func (p *parsed) short(c *cmdRule, a string, next func() (string, bool), r Request) error {
	for j := 1; j < len(a); j++ {
		name := "-" + string(a[j])
		rest := a[j+1:]
		o, ok := c.table[name]
		if !ok {
			// An unknown letter followed by something path-like might be an option
			// whose attached value is a file we do not know about: refuse.
			if strings.ContainsRune(rest, '/') {
				return forbid(a, fmt.Sprintf("Unknown option '%s' in '%s' with a path-like value", name, a), forbiddenHint)
			}
			p.opts = append(p.opts, popt{name: name, raw: []string{name}})
			continue
		}
		po := popt{name: name, raw: []string{name}}
		switch o.kind {
		case forbidden:
			return forbid(a, fmt.Sprintf("Option '%s' is forbidden for %s", name, r.Cmd), forbiddenHint)
		case flag:
			p.opts = append(p.opts, po)
			continue
		case value, pathValue:
			if rest != "" {
				po.val, po.hasVal, po.raw = rest, true, []string{name + rest}
			} else if v, ok := next(); ok {
				po.val, po.hasVal, po.raw = v, true, []string{name, v}
			} else {
				return &Violation{Kind: ArgumentRequired, Arg: a, Reason: fmt.Sprintf("Option '%s' needs a value", name), Hint: "Give the option a value"}
			}
			if o.kind == pathValue {
				if err := confine(r, po.val); err != nil {
					return err
				}
			}
		case optPath:
			if rest != "" {
				po.val, po.hasVal, po.raw = rest, true, []string{name + rest}
				if err := confine(r, rest); err != nil {
					return err
				}
			}
		case value2, value2Path:
			return forbid(a, "two-value options must be given in long form", forbiddenHint)
		}
		p.scriptGiven = p.scriptGiven || o.script
		p.opts = append(p.opts, po)
		return nil // the rest of the cluster was this option's value
	}
	return nil
}

// confineOperands confines the operands that name files, per the rule.
func (p *parsed) confineOperands(c *cmdRule, r Request) error {
	for i, op := range p.operands {
		switch c.operands {
		case words:
			continue
		case script:
			if i == 0 && !p.scriptGiven {
				continue // the program or pattern
			}
		case firstPath:
			if i > 0 {
				continue
			}
		case paths: // every operand
		}
		if op == "-" {
			continue // stdin, which is /dev/null
		}
		if err := confine(r, op); err != nil {
			return err
		}
	}
	return nil
}

const forbiddenHint = "This option can run programs or reach outside the zone; see shed_help(howto='commands')"

// pathLike reports whether an unknown option's value may name a file.
func pathLike(v string) bool {
	return strings.ContainsRune(v, '/') || v == ".." || strings.HasPrefix(v, "~")
}

// confine checks one zone-relative path through the caller's Confine, then that
// the program will resolve exactly the path that was checked (oneString).
func confine(r Request, rel string) error {
	if r.Confine == nil {
		return &Violation{Kind: PathEscape, Arg: rel, Reason: "Paths are not allowed here", Hint: "Use a path inside the zone"}
	}
	clean, err := r.Confine(rel)
	if err != nil {
		return &Violation{Kind: PathEscape, Arg: rel, Err: err,
			Reason: fmt.Sprintf("Path escapes the zone: %s", rel),
			Hint:   "Use a path inside the zone, e.g. 'notes/x.txt' (no absolute paths, no '..' above the zone, no links out)"}
	}
	return oneString(rel, clean)
}

// oneString refuses a path operand that the kernel would resolve differently from
// the clean path Confine checked: the zone check reads "\\" as a separator, folds
// to Unicode NFC and applies ".." lexically, while the program gets the raw string,
// in which "\\" is a letter of a name ("a\\b\\c/../../x" climbs out of the zone),
// an NFD name is another file (a symlink made by tar), and ".." after a symlink
// climbs from the link's target.
func oneString(rel, clean string) error {
	var reason, hint string
	switch {
	case strings.ContainsRune(rel, '\\'):
		reason = fmt.Sprintf("Backslash in a command's path: %s", rel)
		hint = "Use '/' between folders (commands cannot name files whose names contain a backslash)"
	case !norm.NFC.IsNormalString(rel):
		reason = fmt.Sprintf("Path is not in Unicode NFC: %s", rel)
		hint = "Type accented letters as single characters (NFC); rename decomposed names with shed_rename"
	case slices.Contains(strings.Split(rel, "/"), ".."):
		if clean == "" {
			clean = "."
		}
		reason = fmt.Sprintf("'..' in a command's path: %s", rel)
		hint = fmt.Sprintf("Write the path without '..': '%s'", clean)
	default:
		return nil
	}
	return &Violation{Kind: InvalidPath, Arg: rel, Reason: reason, Hint: hint}
}
