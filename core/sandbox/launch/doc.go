// Package launch is the launcher side of core/sandbox: the short-lived process that
// Run starts for every command. It reads a Spec on fd 3, sets rlimits, drops every
// capability, sets no_new_privs, applies Landlock to its own thread and execs the
// command, reporting a failure to start on fd 4.
//
// It is a leaf: it is linked into the small launcher binary cmd/fileshed-sandbox,
// whose start-up cost is paid by every command, so it imports only what its job
// needs (os, strconv, errors, golang.org/x/sys/unix). It must never import
// encoding/json, net, the policy (core/sandbox), github.com/fileshed/fileshed/core,
// handlers, huma or chi. Everything that can be decided in the server (which
// files the command may execute, the Landlock ABI) arrives already decided in the Spec.
package launch
