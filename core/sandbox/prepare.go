package sandbox

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// Request is one command to check, as the model sent it.
type Request struct {
	Cmd  string
	Args []string
	Kind ZoneKind
	// Network is the network_mode valve: "disabled" (also any unknown value),
	// "safe" or "all".
	Network string
	// Confine checks a zone-relative path that the command will open (confine.Fs.Confined):
	// it returns the clean path or an error (escape, invalid). nil refuses every path.
	Confine func(rel string) (string, error)
	// StdoutToFile says that stdout goes to a file (stdout_file), so curl and wget
	// need no -o of their own.
	StdoutToFile bool
}

// Command is what Prepare produces: the final argv and what the kernel layer must
// allow for it.
type Command struct {
	Argv    []string // Argv[0] is the absolute path of the executable
	Exec    []string // absolute paths of helper programs the command may execute
	Network bool     // the command needs TCP (curl, wget, git fetch)
}

// Prepare applies the policy to r. It returns the command to run, or a *Violation.
func Prepare(r Request) (Command, error) {
	c, ok := commands()[r.Cmd]
	if !ok || (c.rw && r.Kind != ReadWrite) {
		return Command{}, &Violation{Kind: CommandForbidden, Arg: r.Cmd,
			Reason: fmt.Sprintf("Command '%s' is not in whitelist", r.Cmd),
			Hint:   "Use shed_info(action='commands') to see the available commands"}
	}
	if c.net && netMode(r.Network) == netDisabled {
		return Command{}, &Violation{Kind: CommandForbidden, Arg: r.Cmd,
			Reason: fmt.Sprintf("Command '%s' is disabled", r.Cmd),
			Hint:   "Ask admin to set network_mode to 'safe' or 'all'"}
	}
	args := slices.Clone(r.Args)
	var prefix []string
	if c.preparse != nil {
		var err error
		if prefix, args, err = c.preparse(c, args, r); err != nil {
			return Command{}, err
		}
	}
	p, err := parse(c, args, r)
	if err != nil {
		return Command{}, err
	}
	p.prefix = append(prefix, p.prefix...)
	if c.check != nil {
		if err := c.check(c, p, r); err != nil {
			return Command{}, err
		}
	}
	if c.needsOp && len(p.operands) == 0 && !p.scriptGiven {
		return Command{}, &Violation{Kind: ArgumentRequired, Arg: r.Cmd,
			Reason: fmt.Sprintf("%s needs a file operand (stdin is empty)", r.Cmd),
			Hint:   fmt.Sprintf("Example: %s file.txt", r.Cmd)}
	}
	bin := r.Cmd
	if c.bin != "" {
		bin = c.bin
	}
	path, err := exec.LookPath(bin)
	if err != nil || !strings.HasPrefix(path, "/") {
		v := &Violation{Kind: CommandNotFound, Arg: r.Cmd,
			Reason: fmt.Sprintf("Command '%s' not found on system", r.Cmd),
			Hint:   "Use shed_info(action='commands') to see the available commands"}
		if c.missing != "" {
			v.Reason, v.Hint = c.missing, "Ask the administrator to install it; shed_info(action='commands') lists what runs here"
		}
		return Command{}, v
	}
	argv := append([]string{path}, c.force...)
	argv = append(argv, p.prefix...)
	argv = append(argv, p.argv(c)...)
	return Command{Argv: argv, Exec: lookHelpers(c.helpers), Network: c.net || p.network}, nil
}

// lookHelpers resolves the helper programs that are installed.
func lookHelpers(names []string) []string {
	var out []string
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil && strings.HasPrefix(p, "/") {
			out = append(out, p)
		}
	}
	return out
}

// Allowed lists the commands a zone kind may run, sorted.
func Allowed(kind ZoneKind) []string {
	var out []string
	for name, c := range commands() {
		if !c.rw || kind == ReadWrite {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Available splits Allowed(ReadWrite) into installed and missing commands.
func Available() (available, missing []string) {
	for _, name := range Allowed(ReadWrite) {
		bin := name
		if c := commands()[name]; c.bin != "" {
			bin = c.bin
		}
		if _, err := exec.LookPath(bin); err == nil {
			available = append(available, name)
		} else {
			missing = append(missing, name)
		}
	}
	return available, missing
}

// parsePolicy parses every rule's option table into its lookup tables.
func parsePolicy(m map[string]*cmdRule) map[string]*cmdRule {
	for name, c := range m {
		t, longs, err := parseOpts(c.opts)
		if err != nil {
			// The table is a compile-time constant; TestPolicyTablesParse keeps it valid.
			panic(fmt.Sprintf("sandbox policy for %s: %v", name, err))
		}
		c.table, c.longs = t, longs
	}
	return m
}
