package admin

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxRefFile bounds a loose reference file read by checkRefs (a hash or a "ref: " line).
const maxRefFile = 4096

// checkRefs checks the references copied into the staged git directory gitDir (loose
// refs and packed-refs): each must hold a commit id or name another reference inside the
// git directory's refs/. It returns why they cannot be used ("" when they can). Why: a
// symbolic reference is a path git and go-git open relative to the git directory; one
// naming "../../x" or "/etc/x" would make fileshed read outside it.
func checkRefs(gitDir string) (string, error) {
	refs := filepath.Join(gitDir, "refs")
	err := filepath.WalkDir(refs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(gitDir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Size() > maxRefFile {
			return refError{fmt.Sprintf("%s is not a reference", filepath.ToSlash(rel))}
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if why := refValue(filepath.ToSlash(rel), strings.TrimSuffix(string(raw), "\n")); why != "" {
			return refError{why}
		}
		return nil
	})
	if re := (refError{}); errors.As(err, &re) {
		return re.why, nil
	}
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	return packedRefs(filepath.Join(gitDir, "packed-refs"))
}

// refError carries why a reference is refused out of the walk.
type refError struct{ why string }

func (e refError) Error() string { return e.why }

// packedRefs checks packed-refs: comment lines, "<id> <refname>" and "^<id>" (a peeled tag).
func packedRefs(file string) (string, error) {
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		id, name, _ := strings.Cut(line, " ")
		switch {
		case strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "^") && commitID.MatchString(line[1:]):
		case commitID.MatchString(id) && insideRefs(name):
		default:
			return fmt.Sprintf("packed-refs line %d names %q, not a reference inside the git directory", n, shortText(line)), nil
		}
	}
	return "", sc.Err()
}

// refValue checks what the loose reference rel holds: a commit id, or "ref: " and a
// reference under refs/.
func refValue(rel, v string) string {
	if commitID.MatchString(v) {
		return ""
	}
	if target, ok := strings.CutPrefix(v, "ref: "); ok && insideRefs(target) {
		return ""
	}
	return fmt.Sprintf("%s names %q, not a commit or a reference inside the git directory", rel, shortText(v))
}

// insideRefs reports whether name is a reference name under refs/ that stays there: no
// "..", no empty or "." component, no backslash or control character, not absolute.
func insideRefs(name string) bool {
	if !strings.HasPrefix(name, "refs/") || strings.ContainsAny(name, "\\\x00") || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return false
	}
	for c := range strings.SplitSeq(name, "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return path.Clean(name) == name
}
