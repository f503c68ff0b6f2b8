package sandbox

import "github.com/fileshed/fileshed/core/sandbox/launch"

// LauncherArg is the first argument that makes a binary act as the launcher
// (launch.Arg): main must call LauncherMain when os.Args[1] == LauncherArg.
const LauncherArg = launch.Arg

// LauncherMain is the launcher (launch.Main), for binaries that already import this
// package (the server, test binaries). The small launcher imports launch alone.
func LauncherMain(args []string) int { return launch.Main(args) }
