package main

import (
	"go/types"
	"maps"
	"slices"
	"strings"
	"testing"
)

// The families hold a narrow handle of the kernel, not the kernel (issue 35 item 1): the
// names of package core that the families use together stay few.

// maxKernelNames is the most names of package core the families may use together: it only
// goes down. 168 for nine families when they first held the handle; 222 for all thirteen
// since commands, sqlite and encryption hold it too (their write protocol is the kernel's)
// and shed_search joined (issue 38); 228 with issue 37's content hashes (two codes, the
// hash helpers: HashOf, NewContentHash, HashNew, CheckExpectedHash); 233 with issue 36's
// journal (Changes, ChangeDiff, Undo, ChangesQuery, ChangeInfo); 227 since the
// reservation, the edit-lock records and the repository check are the kernel's own
// (Edit.Quota, EditLocks, CheckRepo, ReadFs; deniedKernelNames keeps them out). About 65
// of them are methods of the handle, 60 error codes, the rest the kernel's vocabulary
// (Zone, Tx, Step, Caller, Result, ...). Issue 35's target is 60.
const maxKernelNames = 227

// TestFamiliesUseFewKernelNames counts the names of package core used by the non-test files
// of the families, as issue 35 counted them: the package's names (types, functions,
// constants, variables) and the methods of the kernel itself (*core.Service, and the
// handle core.Kernel), the ways in; the fields and methods of the values they hand out (a
// Zone's, a Tx's, an Error's) come with their type and are logged apart. It fails when the
// narrowed families use more than maxKernelNames. The names are logged (go test -v).
func TestFamiliesUseFewKernelNames(t *testing.T) {
	t.Parallel() // reads the shared, type-checked module only
	all, narrowed, members := map[string][]string{}, map[string]bool{}, map[string]bool{}
	for _, f := range moduleFiles(t) {
		rest, ok := strings.CutPrefix(f.pkg, module+"/tools/")
		if !ok {
			continue
		}
		family, _, _ := strings.Cut(rest, "/")
		for _, name := range kernelNames(f.info) {
			if !slices.Contains(all[name], family) {
				all[name] = append(all[name], family)
			}
			if member(name) {
				members[name] = true
			} else {
				narrowed[name] = true
			}
		}
	}
	entries := 0
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if !member(name) {
			entries++
		}
		t.Logf("%s\t%s", name, strings.Join(all[name], " "))
	}
	t.Logf("all families: %d kernel names (%d with the members of the values); narrowed families: %d (%d with the members)",
		entries, len(all), len(narrowed), len(narrowed)+len(members))
	if len(narrowed) > maxKernelNames {
		t.Errorf("the narrowed families use %d names of package core, at most %d: hold a narrow handle", len(narrowed), maxKernelNames)
	}
}

// member tells whether name is a field or a method of a value the kernel hands out, not a
// way into the kernel (a package name, a method of the Service or of the handle).
func member(name string) bool {
	recv, _, ok := strings.Cut(name, ".")
	return ok && recv != "Service" && recv != "kernel"
}

// kernelNames are the names of package core that info uses, as "Name" or "Type.Name".
func kernelNames(info *types.Info) []string {
	var out []string
	for _, u := range kernelUses(info) {
		if !slices.Contains(out, u.name) {
			out = append(out, u.name)
		}
	}
	return out
}

// kernelUses are the uses of names of package core in info, where each is.
func kernelUses(info *types.Info) []found {
	var out []found
	for id, obj := range info.Uses {
		if obj.Pkg() == nil || obj.Pkg().Path() != module+"/core" {
			continue
		}
		name := obj.Name()
		switch o := obj.(type) {
		case *types.Func:
			if recv := o.Type().(*types.Signature).Recv(); recv != nil {
				name = recvName(recv.Type()) + "." + name
			}
		case *types.Var:
			if o.IsField() {
				name = fieldOwner(o) + "." + name
			}
		}
		out = append(out, found{id.Pos(), name})
	}
	slices.SortFunc(out, func(a, b found) int { return int(a.pos - b.pos) })
	return out
}

// deniedKernelNames are the kernel's own mechanisms (issue 35 item 1): the Service itself,
// the locks, the commit, the reservation and the ownership records. A family reaches them
// only through the transaction (Edit.Quota, Tx.Fs's MakeDir, Change.Created), EditLocks and
// CheckRepo; a name here is denied as a package name, a method or a field of any type.
var deniedKernelNames = []string{
	"Service", "Mutate", "LockRepo", "Commit", "Hold", "HoldLease", "HoldOwner", "Reserve", "Reservation", "Grow", "Settle",
	"RecordGroupFiles", "KindRepo", "KindSpace", "SpaceKey", "ZoneKey",
	"AcquireLock", "ReleaseLock", "ForceReleaseLock", "LockOf", "ExpiredLocks",
}

// denied tells whether the kernel name (as kernelUses writes it) is one of deniedKernelNames.
func denied(name string) bool {
	_, base, ok := strings.Cut(name, ".")
	return slices.Contains(deniedKernelNames, name) || ok && slices.Contains(deniedKernelNames, base)
}

// TestFamiliesUseNoKernelMechanism: no family's non-test file uses a name of
// deniedKernelNames (shown failing on a planted file in rules_planted_test.go).
func TestFamiliesUseNoKernelMechanism(t *testing.T) {
	for _, f := range moduleFiles(t) {
		if !strings.HasPrefix(f.pkg, module+"/tools/") {
			continue
		}
		for _, u := range kernelUses(f.info) {
			if denied(u.name) && f.fset.File(u.pos) != nil && f.fset.File(u.pos).Name() == f.fset.File(f.file.Pos()).Name() {
				t.Errorf("%s: a family uses core's %s: the kernel's own (go through the transaction, EditLocks or CheckRepo)", f.fset.Position(u.pos), u.name)
			}
		}
	}
}

// fieldOwner is the name of the type of package core that declares field v.
func fieldOwner(v *types.Var) string {
	scope := v.Pkg().Scope()
	for _, n := range scope.Names() {
		tn, ok := scope.Lookup(n).(*types.TypeName)
		if !ok {
			continue
		}
		if st, ok := tn.Type().Underlying().(*types.Struct); ok {
			for i := range st.NumFields() {
				if st.Field(i) == v {
					return n
				}
			}
		}
	}
	return "?"
}
