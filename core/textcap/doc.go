// Package textcap holds the text helpers of every operation that puts file or command
// output into the model's context (shed_read, shed_exec, lockedit): binary sniffing, a
// head+tail cap with bounded memory, line-ending detection and UTF-8 repair. FUNCTIONS.md
// item 11: caps keep head AND tail (the end of a log or of a command's output is usually what
// matters), and say what they cut.
//
// A leaf: it imports only the standard library and never core.
package textcap
