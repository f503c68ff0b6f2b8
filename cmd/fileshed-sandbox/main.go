// Command fileshed-sandbox is the command launcher of fileshed (core/sandbox/launch),
// as a small binary of its own: installed next to the fileshed executable, it is
// started instead of re-executing the whole server, whose package initialisation
// costs several milliseconds per command. It links package launch alone (no policy,
// no encoding/json, no net) and accepts exactly what "fileshed __sandbox" accepts.
package main

import (
	"os"

	"github.com/fileshed/fileshed/core/sandbox/launch"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != launch.Arg {
		os.Stderr.WriteString("fileshed-sandbox is started by fileshed only\n")
		os.Exit(2)
	}
	os.Exit(launch.Main(os.Args[2:]))
}
