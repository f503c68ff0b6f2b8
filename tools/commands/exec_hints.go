package commands

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/sandbox"
)

// Answers to the mistakes a model makes with shed_exec before it has read the guide: a
// whole command line in cmd, shell operators in args, a writing command in uploads, awk on
// a host without gawk. Each says what to do instead.

// shellOperators are arguments that only mean something to a shell.
var shellOperators = []string{"|", "||", "&&", ";", "&", ">", ">>", "<", "<<", "2>", "2>&1", "&>", "|&"}

// forbiddenHint refines COMMAND_FORBIDDEN for cmd in zone z; nil keeps the policy's answer.
func forbiddenHint(cmd string, z *core.Zone) *core.Error {
	if fields := strings.Fields(cmd); len(fields) > 1 || strings.ContainsAny(cmd, "|<>;&") {
		example := "cmd='grep', args=['-n', 'TODO', 'notes.txt']"
		if len(fields) > 1 && !strings.ContainsAny(cmd, "|<>;&") {
			example = fmt.Sprintf("cmd='%s', args=['%s']", fields[0], strings.Join(fields[1:], "', '"))
		}
		return core.Errf(core.CommandForbidden, "cmd must be one program name, not a command line: %q", core.Shorten(cmd)).With("command", core.Shorten(cmd)).
			WithHint("There is no shell: put the program in cmd and each argument in args, e.g. %s. Pipes and "+
				"redirections do not exist: save output with stdout_file and run the next command on that file", example)
	}
	if z.ReadOnly && slices.Contains(sandbox.Allowed(sandbox.ReadWrite), cmd) && !slices.Contains(sandbox.Allowed(sandbox.ReadOnly), cmd) {
		return core.Errf(core.CommandForbidden, "%s changes files, and %s is read-only for commands", cmd, z.Label).With("command", cmd).
			With("zone", z.Label).
			WithHint("%s is read-only: delete an upload with shed_delete, and write results in zone='storage' (e.g. stdout_file)", z.Label)
	}
	return nil
}

// notFoundHint refines COMMAND_NOT_FOUND for cmd; nil keeps the policy's answer.
func notFoundHint(cmd string) *core.Error {
	if cmd != "awk" {
		return nil
	}
	// awk always runs gawk --sandbox (no system(), pipes or redirections); mawk has no such mode.
	return core.Errf(core.CommandNotFound, "awk needs gawk (its --sandbox mode), which is not installed on this server").
		With("command", cmd).With("package", "gawk").
		WithHint("Ask the administrator to install the Debian package gawk; meanwhile use grep, sed, cut or sort")
}

// shellHint is the note of a failed run one of whose arguments was a shell operator passed
// to the program as text (cut -d '|' is legitimate, so it is not refused); "" otherwise.
func shellHint(args []string, exitCode int) string {
	if exitCode == 0 {
		return ""
	}
	for _, a := range args {
		if slices.Contains(shellOperators, a) {
			return fmt.Sprintf("There is no shell: %q reached the program as an argument. Run one command per call; "+
				"save output with stdout_file and give that file to the next command", a)
		}
	}
	return ""
}
