package core

// Codes of the command family (shed_exec, shed_allowed_commands, shed_lockedit_exec).
const (
	CommandForbidden   Code = "COMMAND_FORBIDDEN"
	ArgumentForbidden  Code = "ARGUMENT_FORBIDDEN"
	ArgumentRequired   Code = "ARGUMENT_REQUIRED"
	CommandNotFound    Code = "COMMAND_NOT_FOUND"
	Timeout            Code = "TIMEOUT"
	ExecError          Code = "EXEC_ERROR"
	SandboxUnavailable Code = "SANDBOX_UNAVAILABLE"
	TooManyCommands    Code = "TOO_MANY_COMMANDS"
)

func init() {
	addHints(map[Code]string{
		CommandForbidden:   "Use shed_info(action='commands') to see the commands this zone allows",
		ArgumentForbidden:  "Drop the refused option; see shed_help for what each command accepts",
		ArgumentRequired:   "Add the missing argument to args (e.g. curl -o file URL), or use stdout_file='out.txt', and call again",
		CommandNotFound:    "The command is not installed: check shed_info(action='commands') for what is available",
		Timeout:            "Increase timeout (at most exec_timeout_max, see shed_info(action='parameters')), or split the work",
		ExecError:          "Retry; if it persists, report the request id to the administrator",
		SandboxUnavailable: "The administrator must run fileshed on a kernel with Landlock, or set exec_sandbox to best_effort",
		TooManyCommands:    "Wait a few seconds for your running commands to finish, then call shed_exec again (one at a time)",
	})
}
