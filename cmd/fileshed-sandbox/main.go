// Command fileshed-sandbox is the command launcher of fileshed (core/sandbox), as a
// small binary of its own: installed next to the fileshed executable, it is started
// instead of re-executing the whole server, whose package initialisation costs several
// milliseconds per command. It accepts exactly what "fileshed __sandbox" accepts.
package main

import (
	"os"

	"github.com/fileshed/fileshed/core/sandbox"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != sandbox.LauncherArg {
		os.Stderr.WriteString("fileshed-sandbox is started by fileshed only\n")
		os.Exit(2)
	}
	os.Exit(sandbox.LauncherMain(os.Args[2:]))
}
