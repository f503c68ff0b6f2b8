package main

import (
	"go/ast"
	"go/constant"
	"go/types"
	"slices"
	"strings"
	"syscall"
)

// writeFuncs are the package functions that write a file system.
var writeFuncs = map[string][]string{
	"os": {"Create", "CreateTemp", "OpenFile", "WriteFile", "Mkdir", "MkdirAll", "MkdirTemp", "Remove", "RemoveAll",
		"Rename", "Chmod", "Chown", "Lchown", "Chtimes", "Symlink", "Link", "Truncate", "CopyFS"},
	"io/ioutil": {"WriteFile", "TempFile", "TempDir"},
	"golang.org/x/sys/unix": {"Creat", "Open", "Openat", "Openat2", "Unlink", "Unlinkat", "Rmdir", "Rename", "Renameat",
		"Renameat2", "Mkdir", "Mkdirat", "Mknod", "Mknodat", "Symlink", "Symlinkat", "Link", "Linkat", "Chmod", "Fchmod",
		"Fchmodat", "Chown", "Fchown", "Fchownat", "Lchown", "Truncate", "Ftruncate", "Utimes", "UtimesNano",
		"UtimesNanoAt", "Futimes", "Fallocate"},
	"syscall": {"Creat", "Open", "Openat", "Unlink", "Unlinkat", "Rmdir", "Rename", "Renameat", "Mkdir", "Mkdirat",
		"Mknod", "Symlink", "Link", "Chmod", "Fchmod", "Fchmodat", "Chown", "Fchown", "Lchown", "Truncate", "Ftruncate",
		"Utimes", "UtimesNano", "Futimes", "Fallocate"},
	"github.com/spf13/afero":                    {"WriteFile", "WriteReader", "SafeWriteReader", "TempFile", "TempDir"},
	"github.com/fileshed/fileshed/core/confine": {"New"}, // creates the folder it confines
}

// writeMethods are the methods that write a file system, by the package and type that
// declare them (an interface's methods too: afero.Fs, afero.File).
var writeMethods = map[string]map[string][]string{
	"os": {
		"Root": {"Create", "OpenFile", "WriteFile", "Mkdir", "MkdirAll", "Remove", "RemoveAll", "Rename", "Chmod",
			"Chown", "Lchown", "Chtimes", "Symlink", "Link"},
		"File": {"Chmod", "Chown", "Truncate"},
	},
	"github.com/spf13/afero": {
		"Fs":        {"Create", "OpenFile", "Mkdir", "MkdirAll", "Remove", "RemoveAll", "Rename", "Chmod", "Chown", "Chtimes"},
		"File":      {"Truncate"},
		"Symlinker": {"SymlinkIfPossible"},
		"Linker":    {"SymlinkIfPossible"},
	},
	"github.com/fileshed/fileshed/core/confine": {
		"Fs": {"Create", "OpenFile", "Mkdir", "MkdirAll", "Remove", "RemoveAll", "Rename", "Chmod", "Chown", "Chtimes",
			"SymlinkIfPossible", "WriteAtomic", "MoveTo"},
	},
}

// flagArg is the argument that holds the open flags of the calls that only write when
// asked to.
var flagArg = map[string]int{"OpenFile": 1, "Open": 1, "Openat": 2, "Openat2": 2}

// writeFlags are the open flags that make an open a write.
const writeFlags = syscall.O_WRONLY | syscall.O_RDWR | syscall.O_CREAT | syscall.O_TRUNC | syscall.O_APPEND

// writeCalls are the uses in f of a function or method that writes a file system: calls
// and method values alike (a method value called later writes just the same).
func writeCalls(info *types.Info, f *ast.File) []found {
	calls := map[ast.Expr]*ast.CallExpr{}
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			calls[ast.Unparen(c.Fun)] = c
		}
		return true
	})
	var out []found
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		fn, ok := info.Uses[sel.Sel].(*types.Func)
		if !ok || fn.Pkg() == nil {
			return true
		}
		name, what := fn.Name(), fn.Pkg().Path()
		var listed bool
		if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
			typ := recvName(recv.Type())
			listed, what = slices.Contains(writeMethods[what][typ], name), what+"."+typ
		} else {
			listed = slices.Contains(writeFuncs[what], name)
		}
		if !listed {
			return true
		}
		if i, ok := flagArg[name]; ok {
			if c := calls[sel]; c != nil && i < len(c.Args) && !writesWith(info, c.Args[i]) {
				return true
			}
		}
		out = append(out, found{sel.Pos(), what + "." + name})
		return true
	})
	return out
}

// recvName is the name of a method's receiver type ("" when unnamed).
func recvName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return ""
}

// writesWith tells whether open flags may write: a constant with a write flag, or any
// value not known at compile time.
func writesWith(info *types.Info, arg ast.Expr) bool {
	v := info.Types[arg].Value
	if v == nil || v.Kind() != constant.Int {
		return true
	}
	n, ok := constant.Int64Val(v)
	return !ok || n&writeFlags != 0
}

// kernelLeaves are the kernel's mechanisms no family imports (their subpackages too).
var kernelLeaves = []string{"core/store", "core/lock", "core/vcs"}

// leafImports are the kernel leaves f imports when its package is a family's (tools/<f>
// or a package nested below it).
func leafImports(pkg string, f *ast.File) []string {
	rest, ok := strings.CutPrefix(pkg, module+"/tools/")
	if !ok || rest == "" {
		return nil
	}
	var out []string
	for _, spec := range f.Imports {
		p := strings.Trim(spec.Path.Value, `"`)
		for _, leaf := range kernelLeaves {
			if p == module+"/"+leaf || strings.HasPrefix(p, module+"/"+leaf+"/") {
				out = append(out, strings.TrimPrefix(p, module+"/"))
			}
		}
	}
	return out
}

// storageNames are the names of the storage tree (core/layout.go).
var storageNames = []string{"users", "groups", "Uploads", "Storage", "Documents", "data", "repo.git", "editzone",
	"fileshed.sqlite", "fileshed.lock", ".fileshed-running", ".fileshed-clock", ".fileshed-state", "links.key",
	".plain", ".import-original"}

// layoutJoins are the calls of filepath.Join or path.Join in f with an argument (a literal
// or a constant) that names a folder or a file of the storage tree.
func layoutJoins(info *types.Info, f *ast.File) []found {
	var out []found
	ast.Inspect(f, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
		if !ok {
			return true
		}
		fn, ok := info.Uses[sel.Sel].(*types.Func)
		if !ok || fn.Pkg() == nil || fn.Name() != "Join" || fn.Pkg().Path() != "path/filepath" && fn.Pkg().Path() != "path" {
			return true
		}
		for _, a := range c.Args {
			if v := info.Types[a].Value; v != nil && v.Kind() == constant.String {
				for seg := range strings.SplitSeq(constant.StringVal(v), "/") {
					if slices.Contains(storageNames, seg) {
						out = append(out, found{a.Pos(), fn.Pkg().Path() + ".Join(..., " + v.ExactString() + ")"})
					}
				}
			}
		}
		return true
	})
	return out
}
