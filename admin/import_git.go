package admin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/fileshed/fileshed/core/vcs"
)

// importAuthor signs the commit that records what the original had left uncommitted.
var importAuthor = vcs.Signature{Name: "fileshed import-original", Email: "fileshed@localhost"}

// repo makes gitDir, beside the staged work tree data, the repository of a versioned zone
// whose folder in the original is srcData: the original's srcData/.git with its commits,
// authors, messages and dates when it can be read, else a new repository (reported). What
// the original had not committed (its commands never committed) is committed on top, so
// the history and the files agree.
func (im *importer) repo(o *ownerReport, label, srcData, gitDir, data string) error {
	srcGit := path.Join(srcData, ".git")
	why, branch := "", ""
	switch fi, err := im.src.Lstat(srcGit); {
	case errors.Is(err, fs.ErrNotExist):
		why = "the original had no repository there"
	case err != nil:
		return err
	case !fi.IsDir():
		why = ".git is not a folder (a symlink or a gitdir file is never followed)"
		im.damaged = append(im.damaged, fmt.Sprintf("%s: %s", srcGit, why))
	default:
		if why, branch, err = im.history(o, srcGit, gitDir, data); err != nil {
			return fmt.Errorf("%s: %w", srcGit, err)
		}
		if why != "" {
			im.damaged = append(im.damaged, fmt.Sprintf("%s: %s", srcGit, why))
			why += " (every earlier version of these files is lost)"
		}
	}
	if why != "" {
		if err := os.RemoveAll(gitDir); err != nil {
			return err
		}
		o.note("%s: history not imported: %s; the files are committed as one new version", srcGit, why)
	}
	r, err := vcs.Open(gitDir, data)
	if err != nil {
		return fmt.Errorf("%s: new repository: %w", srcData, err)
	}
	defer r.Close()
	msg := "Imported from the original Fileshed"
	if why == "" {
		msg += ": the changes it had not committed"
	}
	if _, err := r.CommitAll(importAuthor, msg); err != nil {
		return fmt.Errorf("%s: commit: %w", srcData, err)
	}
	log, err := r.Log("", 0)
	if err != nil {
		return fmt.Errorf("%s: history: %w", srcData, err)
	}
	line := fmt.Sprintf("%s %d commit(s)", label, len(log))
	if branch != "" {
		line += " on " + branch
	}
	o.history = append(o.history, line)
	return nil
}

// history copies the original's git directory srcGit into gitDir: objects, refs,
// packed-refs and HEAD only. Never copied: hooks (code git would run), config (fileshed
// writes its own: hooks off, no fsmonitor), the index (rebuilt from HEAD), alternates (a
// path to objects elsewhere), logs and the rest. It returns why the history cannot be
// used ("" when it can) and the branch.
func (im *importer) history(o *ownerReport, srcGit, gitDir, data string) (why, branch string, err error) {
	r, err := vcs.Open(gitDir, data) // the layout and fileshed's own config
	if err != nil {
		return "", "", err
	}
	if err := r.Close(); err != nil {
		return "", "", err
	}
	im.gitRisks(o, srcGit)
	entries, err := im.readDir(srcGit)
	if err != nil {
		return "", "", err
	}
	for _, e := range entries {
		switch e.Name() {
		case "objects", "refs", "packed-refs", "shallow":
			if err := im.gitCopy(o, path.Join(srcGit, e.Name()), filepath.Join(gitDir, e.Name())); err != nil {
				return "", "", err
			}
		}
	}
	if why, err = checkRefs(gitDir); why != "" || err != nil {
		return why, "", err
	}
	if why, branch, err = im.head(o, srcGit, gitDir); why != "" || err != nil {
		return why, "", err
	}
	r, err = vcs.Open(gitDir, data)
	if err != nil {
		return err.Error(), "", nil
	}
	defer r.Close()
	// The import holds the storage exclusively (no server runs): Repair may rebuild the
	// index from the copied HEAD and drop lock files the original left.
	if _, err := r.Repair(); err != nil {
		return err.Error(), "", nil
	}
	if err := r.Verify(); err != nil {
		return err.Error(), "", nil
	}
	// Every object shed_version may read must be there: each commit, tree and blob
	// reachable from a branch or tag, read to its end.
	if _, err := r.CheckReachable(); err != nil {
		return err.Error(), "", nil
	}
	return "", branch, nil
}

// gitCopy copies src of the original's git directory to dst: folders and regular files;
// alternates and symlinks are reported and left out.
func (im *importer) gitCopy(o *ownerReport, src, dst string) error {
	fi, err := im.src.Lstat(src)
	if err != nil {
		return err
	}
	switch base := path.Base(src); {
	case base == "alternates" || base == "http-alternates":
		o.note("%s: objects borrowed from elsewhere are not imported (the history may be incomplete)", src)
		return nil
	case fi.Mode().IsRegular():
		in, _, err := im.openRegular(src)
		if err != nil {
			return err
		}
		defer in.Close()
		_, err = writeNew(dst, in, 0o600)
		return err
	case !fi.IsDir():
		o.note("%s: not a file or folder (a symlink is never followed): not imported", src)
		return nil
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	entries, err := im.readDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := im.gitCopy(o, path.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// branchName is what a HEAD may name: a plain branch (no "..", no odd characters that a
// ref path could use to leave the git directory).
var branchName = regexp.MustCompile(`^refs/heads/[A-Za-z0-9_-][A-Za-z0-9._/-]{0,200}$`)

// commitID is a detached HEAD: a full SHA-1 commit id.
var commitID = regexp.MustCompile(`^[0-9a-f]{40}$`)

// head writes gitDir/HEAD from the original's: the same branch, or, for a HEAD detached at
// a commit (a `git checkout <commit>` of the original), a branch at that commit, since
// fileshed commits on a branch.
func (im *importer) head(o *ownerReport, srcGit, gitDir string) (why, branch string, err error) {
	in, fi, err := im.openRegular(path.Join(srcGit, "HEAD"))
	if err != nil {
		return "HEAD: " + err.Error(), "", nil
	}
	defer in.Close()
	if fi.Size() > 4096 {
		return "HEAD is not a git HEAD", "", nil
	}
	raw, err := io.ReadAll(in)
	if err != nil {
		return "", "", err
	}
	s := strings.TrimSpace(string(raw))
	ref, isRef := strings.CutPrefix(s, "ref: ")
	switch {
	case isRef && branchName.MatchString(ref) && !strings.Contains(ref, "..") && !strings.Contains(ref, "//") &&
		!strings.HasSuffix(ref, "/") && !strings.HasSuffix(ref, ".lock"):
	case !isRef && commitID.MatchString(s):
		ref = "refs/heads/main"
		if refExists(gitDir, ref) {
			ref = "refs/heads/imported-head"
		}
		if _, err := writeNew(filepath.Join(gitDir, filepath.FromSlash(ref)), strings.NewReader(s+"\n"), 0o600); err != nil {
			return "", "", err
		}
		o.note("%s: HEAD was detached at %s: it is now the branch %s", srcGit, s[:12], strings.TrimPrefix(ref, "refs/heads/"))
	default:
		return fmt.Sprintf("HEAD names %q, not a branch", shortText(s)), "", nil
	}
	if err := os.WriteFile(filepath.Join(gitDir, "HEAD"), []byte("ref: "+ref+"\n"), 0o600); err != nil {
		return "", "", err
	}
	return "", strings.TrimPrefix(ref, "refs/heads/"), nil
}

// refExists reports whether the copied git directory has the branch ref, loose or packed.
func refExists(gitDir, ref string) bool {
	if _, err := os.Lstat(filepath.Join(gitDir, filepath.FromSlash(ref))); err == nil {
		return true
	}
	packed, _ := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	return bytes.Contains(packed, []byte(" "+ref+"\n"))
}

// riskyConfig are the settings of a git config that make git run a program or read
// another file: reported, since the config is never imported.
var riskyConfig = map[string]bool{"core.fsmonitor": true, "core.hookspath": true, "core.sshcommand": true,
	"core.editor": true, "core.pager": true, "core.askpass": true, "core.gitproxy": true}

// gitRisks reports the hooks and the risky settings the original's git directory held,
// none of which is imported.
func (im *importer) gitRisks(o *ownerReport, srcGit string) {
	var hooks []string
	entries, _ := im.readDir(path.Join(srcGit, "hooks"))
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sample") {
			hooks = append(hooks, e.Name())
		}
	}
	if len(hooks) > 0 {
		o.note("%s/hooks: %s: not imported (fileshed runs no hook)", srcGit, strings.Join(hooks, ", "))
	}
	in, fi, err := im.openRegular(path.Join(srcGit, "config"))
	if err != nil || fi.Size() > 1<<20 {
		return
	}
	defer in.Close()
	cfg := gitconfig.New()
	if gitconfig.NewDecoder(in).Decode(cfg) != nil {
		return
	}
	var risky []string
	if len(cfg.Includes) > 0 {
		risky = append(risky, "include")
	}
	for _, s := range cfg.Sections {
		name := strings.ToLower(s.Name)
		switch name {
		case "alias", "filter", "include", "includeif", "credential", "diff", "merge":
			risky = append(risky, name)
			continue
		}
		for _, opt := range s.Options {
			key := name + "." + strings.ToLower(opt.Key)
			if riskyConfig[key] && !(key == "core.hookspath" && opt.Value == "/dev/null") && !(key == "core.fsmonitor" && opt.Value == "false") {
				risky = append(risky, key)
			}
		}
	}
	if len(risky) > 0 {
		sort.Strings(risky)
		o.note("%s/config: not imported (it set %s); fileshed's own config runs no hook and no fsmonitor", srcGit, strings.Join(risky, ", "))
	}
}

// shortText bounds a value quoted in the report.
func shortText(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
