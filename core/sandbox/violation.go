package sandbox

import "errors"

// ViolationKind classifies a policy refusal; core maps it to its error code.
type ViolationKind int

// Violation kinds.
const (
	CommandForbidden  ViolationKind = iota + 1 // COMMAND_FORBIDDEN
	ArgumentForbidden                          // ARGUMENT_FORBIDDEN
	ArgumentRequired                           // ARGUMENT_REQUIRED
	PathEscape                                 // PATH_ESCAPE (or INVALID_PATH when Err says so)
	CommandNotFound                            // COMMAND_NOT_FOUND
	InvalidPath                                // INVALID_PATH: a path the program would read differently
)

// Violation is a policy refusal. Arg is the offending command or argument as the
// model sent it; Reason and Hint are written for the model and never contain host
// paths. Err is the Confine error for PathEscape (errors.Is works through it).
type Violation struct {
	Kind         ViolationKind
	Arg          string
	Reason, Hint string
	Err          error
}

func (v *Violation) Error() string { return v.Reason }

// Unwrap returns the Confine error behind a PathEscape, if any.
func (v *Violation) Unwrap() error { return v.Err }

// ErrSandboxUnavailable is returned by Run when Mode is ModeRequired and the kernel
// offers no Landlock (core: SANDBOX_UNAVAILABLE).
var ErrSandboxUnavailable = errors.New("sandbox required but Landlock is unavailable on this kernel")

func forbid(arg, reason, hint string) *Violation {
	return &Violation{Kind: ArgumentForbidden, Arg: arg, Reason: reason, Hint: hint}
}
