package sandbox

import (
	"fmt"
	"strings"
)

// find has its own grammar: starting points, then an expression of primaries.

// findForbidden run programs.
var findForbidden = map[string]bool{"-exec": true, "-execdir": true, "-ok": true, "-okdir": true}

// findPathPrimaries take a file name (read or, for -fprint*/-fls, written).
var findPathPrimaries = map[string]bool{
	"-fprint": true, "-fprint0": true, "-fprintf": true, "-fls": true,
	"-newer": true, "-anewer": true, "-cnewer": true, "-samefile": true, "-files0-from": true,
}

// findWriters write files: refused in read-only zones.
var findWriters = map[string]bool{"-delete": true, "-fprint": true, "-fprint0": true, "-fprintf": true, "-fls": true}

// findValuePrimaries take one value that is not a file.
var findValuePrimaries = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-regextype": true, "-lname": true, "-ilname": true, "-type": true, "-xtype": true,
	"-size": true, "-perm": true, "-user": true, "-group": true, "-uid": true, "-gid": true, "-links": true,
	"-inum": true, "-mtime": true, "-atime": true, "-ctime": true, "-mmin": true, "-amin": true, "-cmin": true,
	"-used": true, "-maxdepth": true, "-mindepth": true, "-printf": true, "-fstype": true, "-context": true,
}

// checkFind confines starting points and file-valued primaries, refuses the
// primaries that execute programs, and -delete when symlinks are followed (-L, -H,
// -follow would let it delete outside the zone).
func checkFind(_ *cmdRule, p *parsed, r Request) error {
	args := p.raw
	i := 0
	for i < len(args) && (args[i] == "-L" || args[i] == "-H" || args[i] == "-P" || strings.HasPrefix(args[i], "-D") || strings.HasPrefix(args[i], "-O")) {
		i++
	}
	for ; i < len(args); i++ { // starting points
		a := args[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == ")" || a == "," {
			break
		}
		if err := confine(r, a); err != nil {
			return err
		}
	}
	follows := false
	for _, a := range args {
		if a == "-L" || a == "-H" || a == "-follow" {
			follows = true
		}
	}
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case findForbidden[a]:
			return forbid(a, fmt.Sprintf("Option '%s' is forbidden for find", a),
				"find -exec can execute arbitrary commands. Use find + manual processing instead.")
		case findWriters[a] && r.Kind == ReadOnly:
			return forbid(a, fmt.Sprintf("find %s writes: forbidden in a read-only zone", a), "This zone is read-only")
		case a == "-delete" && follows:
			return forbid(a, "find -delete cannot be combined with -L, -H or -follow", "Drop -L/-H/-follow")
		case findPathPrimaries[a] || (strings.HasPrefix(a, "-newer") && len(a) == 8 && a[7] != 't'):
			if i+1 < len(args) {
				i++
				if err := confine(r, args[i]); err != nil {
					return err
				}
			}
			if a == "-fprintf" {
				i++ // the format
			}
		case findValuePrimaries[a] || strings.HasPrefix(a, "-newer"):
			i++
		}
	}
	return nil
}
