package sandbox

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// executables expands progs with what the kernel also opens for execution: the
// ELF interpreter (ld.so) and, for scripts, the "#!" interpreter (through
// /usr/bin/env too, looked up in pathList, the command's PATH), recursively. Only
// existing absolute paths are kept: they become the Landlock execute rules, and a
// relative one would resolve against the server's directory here but the zone's in
// the command.
func executables(progs []string, pathList string) []string {
	seen := map[string]bool{}
	var out []string
	var add func(p string, depth int)
	add = func(p string, depth int) {
		if !filepath.IsAbs(p) || seen[p] || depth > 4 {
			return
		}
		fi, err := os.Stat(p)
		if err != nil {
			return
		}
		seen[p] = true
		out = append(out, p)
		for _, next := range interpreters(p, fi, pathList) {
			add(next, depth+1)
		}
	}
	for _, p := range progs {
		add(p, 0)
	}
	return out
}

// fileID identifies one version of a file: any change to it (rewrite, replace,
// chmod, rename over) changes at least one field (ctime, inode).
type fileID struct {
	dev, ino, size   uint64
	mtimeNs, ctimeNs int64
}

func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: st.Dev, ino: st.Ino, size: uint64(st.Size),
		mtimeNs: st.Mtim.Nano(), ctimeNs: st.Ctim.Nano()}, true
}

type elfInterp struct {
	id     fileID
	interp []string
}

// elfCache maps the path of an ELF program to its PT_INTERP, for the version of
// the file that was parsed: parsing the headers on every command is the costly part
// of expanding the execute rules, and the programs are few and rarely change.
var elfCache sync.Map // string -> elfInterp

// interpreters returns the programs the kernel or env(1) runs to start p (stat fi).
func interpreters(p string, fi os.FileInfo, pathList string) []string {
	id, cacheable := idOf(fi)
	if cacheable {
		if v, ok := elfCache.Load(p); ok && v.(elfInterp).id == id {
			return v.(elfInterp).interp
		}
	}
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.Read(head)
	head = head[:n]
	if bytes.HasPrefix(head, []byte("#!")) {
		return shebang(head[2:], pathList)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil
	}
	defer ef.Close()
	var interp []string
	for _, prog := range ef.Progs {
		if prog.Type == elf.PT_INTERP {
			b := make([]byte, prog.Filesz)
			if _, err := prog.ReadAt(b, 0); err == nil {
				interp = []string{string(bytes.TrimRight(b, "\x00"))}
			}
			break
		}
	}
	// Only cache what was read from the version stat saw: a file replaced in between
	// is parsed again next time.
	if after, err := f.Stat(); cacheable && err == nil {
		if id2, ok := idOf(after); ok && id2 == id {
			elfCache.Store(p, elfInterp{id: id, interp: interp})
		}
	}
	return interp
}

// shebang returns the interpreter of a "#!" line (line is what follows "#!") and,
// for env, the program env runs.
func shebang(line []byte, pathList string) []string {
	line, _, _ = bytes.Cut(line, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return nil
	}
	out := []string{fields[0]}
	if strings.HasSuffix(fields[0], "/env") {
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "-") && !strings.Contains(f, "=") {
				if lp := lookPathIn(f, pathList); lp != "" {
					out = append(out, lp)
				}
				break
			}
		}
	}
	return out
}

// lookPathIn is exec.LookPath with the command's PATH (pathList) instead of the
// server's, and only absolute results.
func lookPathIn(name, pathList string) string {
	if strings.Contains(name, "/") {
		if filepath.IsAbs(name) && isExecutable(name) {
			return name
		}
		return ""
	}
	for _, dir := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p
		}
	}
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// envPath is the PATH of env (the command's environment), "" when unset.
func envPath(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			return v
		}
	}
	return ""
}
