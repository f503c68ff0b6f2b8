// Package sandbox runs the commands of shed_exec (and shed_lockedit_exec) so that
// they stay inside their zone even when an argument check is wrong.
//
// It has two layers:
//
//   - Policy (Prepare): a per-zone whitelist and a per-command option policy written
//     as data in policy.go. It refuses dangerous options (with GNU long-option
//     abbreviations, attached short values and --opt=value forms), confines every
//     operand and option value that names a file through the caller's Confine
//     function, inserts "--" before operands where the tool understands it, and
//     forces safe flags (sed --sandbox, gawk --sandbox, sqlite3 -safe, ...).
//   - Kernel (Run + the leaf package launch): Run starts the small launcher
//     cmd/fileshed-sandbox when it is installed beside the executable, else
//     re-executes the server as "<self> __sandbox"; either runs launch.Main, which
//     becomes a child subreaper, drops capabilities, sets no_new_privs, applies
//     Landlock (read-only system files, read-write zone only, execute only the
//     command and its declared helpers, no TCP unless the network is allowed, no
//     signals or abstract sockets outside the sandbox) and a seccomp filter (no
//     sockets when the network is off, no FIFOs or devices, no set-id bits, no
//     signal to the launcher), forks the command with a scrubbed environment, stdin
//     from /dev/null and only fds 0-2, sets its rlimits, and when it ends (or Run
//     stops it at the timeout) kills and reaps every process it started before
//     reporting. Output is captured head+tail, bounded.
//
// It sits under core: core maps Violation kinds and ErrSandboxUnavailable to its
// error codes, resolves zones and quotas, and calls Prepare then Run. This package
// must never import github.com/fileshed/fileshed/core, handlers, huma or chi, and
// its errors never contain host paths.
package sandbox
