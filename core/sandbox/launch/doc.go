// Package launch is the launcher side of core/sandbox: the process that Run starts
// for every command. It reads a Spec on fd 3, confines its main thread (no
// capabilities, no_new_privs, Landlock, seccomp), forks the command from it with
// its rlimits, stays its parent as a child subreaper until the command and every
// process it started are gone, and reports on fd 4 (see Main).
//
// It is a leaf: it is linked into the small launcher binary cmd/fileshed-sandbox,
// whose start-up cost is paid by every command, so it imports only what its job
// needs (os, syscall, runtime, io, bytes, strconv, time, errors,
// golang.org/x/sys/unix). It must never import
// encoding/json, net, the policy (core/sandbox), github.com/fileshed/fileshed/core,
// handlers, huma or chi. Everything that can be decided in the server (which
// files the command may execute, the Landlock ABI) arrives already decided in the Spec.
package launch
