package core

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fileshed/fileshed/core/confine"
)

// maxProtectedShown bounds the protected paths AdminVerify lists per zone (all are counted).
const maxProtectedShown = 20

// protectedIn lists the protected names (ProtectedReason) that the versioned zone z holds in
// its data folder under space: what no tool can delete (PROTECTED_PATH) and every download
// of the folder carries — a .git an import or an older version let in. Each name is
// listed once, the walk not going below it; at most maxProtectedShown, then a count.
// fileshed's temporary names are left out: a write in flight beside a running server has
// one, and the sweeps remove what a crash left.
func protectedIn(ctx context.Context, space string, z *Zone) ([]string, error) {
	z.Versioned = true
	var found []string
	n := 0
	w := treeWalk{visit: func(_ int, rel string, _ walkEnt) (bool, error) {
		name := filepath.Base(rel)
		why := ProtectedReason(z, name)
		if why == "" || confine.IsTempName(name) { // a write in flight beside a running server
			return true, nil
		}
		if n++; n <= maxProtectedShown {
			found = append(found, fmt.Sprintf("%s (%s)", rel, why))
		}
		return false, nil
	}, problem: func(string, error) {}} // unreadable folders are measureOwner's to report
	if err := w.run(ctx, DataDir(space)); err != nil {
		return nil, err
	}
	if n > maxProtectedShown {
		found = append(found, fmt.Sprintf("and %d more", n-maxProtectedShown))
	}
	return found, nil
}
