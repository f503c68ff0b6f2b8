package sandbox

import (
	"fmt"
	"slices"
)

// git under shed_exec is read-only: go-git owns the repository (and its index), the
// git directory lives outside the zone (GitEnv), and the CLI runs with hardened
// configuration so nothing in a repository can make it run a program.

// gitRead are the subcommands shed_exec may run.
var gitRead = []string{"log", "show", "diff", "status", "blame", "grep", "ls-files", "ls-tree",
	"shortlog", "rev-parse", "rev-list", "cat-file", "describe"}

// gitGlobals are the only options accepted before the subcommand (-c, -C, --git-dir,
// --work-tree, --exec-path, --config-env... are refused).
var gitGlobals = []string{"--no-pager", "-P", "--literal-pathspecs", "--glob-pathspecs",
	"--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects"}

// gitHardening is forced before the subcommand: no fsmonitor, hooks, pager or
// transport, whatever the repository configuration says.
var gitHardening = []string{
	"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.pager=cat",
	"-c", "protocol.allow=never", "-c", "core.untrackedCache=false", "-c", "submodule.recurse=false",
}

// gitOpts: grep -O runs a pager program; --ext-diff/--textconv/--filters run
// configured drivers; --no-index reads paths outside the repository; the rev-parse
// options that print host paths are refused; values naming files are confined.
const gitOpts = "!-O !--open-files-in-pager !--ext-diff !--textconv !--filters !--no-index !--recurse-submodules " +
	"!--git-dir !--absolute-git-dir !--git-common-dir !--show-toplevel !--show-superproject-working-tree " +
	"!--git-path !--resolve-git-dir !--shared-index-path !--exec-path !--work-tree " +
	"--output= --contents= --ignore-revs-file= -X= --exclude-from= *-f= " +
	"-n: --max-count: --skip: --since: --until: --after: --before: --author: --committer: --grep: -G: -S: " +
	"--format: --pretty: --date: --encoding: --diff-filter: -L: *-e: --exclude: -x: -m: --max-depth:"

// gitPreparse checks the global options and the subcommand and returns the hardened
// prefix ("-c ... <globals> <subcommand> [--no-ext-diff --no-textconv]").
func gitPreparse(_ *cmdRule, args []string, _ Request) ([]string, []string, error) {
	prefix := slices.Clone(gitHardening)
	i := 0
	for ; i < len(args) && len(args[i]) > 0 && args[i][0] == '-'; i++ {
		if !slices.Contains(gitGlobals, args[i]) {
			return nil, nil, forbid(args[i], fmt.Sprintf("git option '%s' is forbidden", args[i]),
				"Run git with a subcommand only, e.g. git log --oneline")
		}
		prefix = append(prefix, args[i])
	}
	if i == len(args) {
		return nil, nil, forbid("git", "Git command without subcommand", "Example: git status, git log")
	}
	sub := args[i]
	if !slices.Contains(gitRead, sub) {
		return nil, nil, &Violation{Kind: CommandForbidden, Arg: "git " + sub,
			Reason: fmt.Sprintf("Git subcommand '%s' is not allowed in shed_exec (read-only git only)", sub),
			Hint:   "Allowed: " + fmt.Sprint(gitRead) + ". Documents are committed automatically."}
	}
	prefix = append(prefix, sub)
	if sub == "log" || sub == "show" || sub == "diff" {
		prefix = append(prefix, "--no-ext-diff", "--no-textconv")
	}
	return prefix, args[i+1:], nil
}

// checkGit refuses blame -S (it reads a revision list from a file).
func checkGit(_ *cmdRule, p *parsed, _ Request) error {
	if slices.Contains(p.prefix, "blame") && p.has("-S") {
		return forbid("-S", "git blame -S is forbidden", "Use git blame <file>")
	}
	return nil
}

// GitEnv returns the environment entries git needs on top of BuildEnv: the git
// directory (outside the zone: a user cannot write its config or hooks), the work
// tree, no system or global configuration, and no optional locks (git status must
// not rewrite the index that go-git owns). Give gitDir to Spec.ExtraRO.
func GitEnv(gitDir, workTree string) []string {
	return []string{
		"GIT_DIR=" + gitDir,
		"GIT_WORK_TREE=" + workTree,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_NO_REPLACE_OBJECTS=1",
	}
}
