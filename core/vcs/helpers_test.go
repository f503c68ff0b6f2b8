package vcs

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// zone is a work tree and its git directory side by side, as core lays them
// out: .../Documents/data and .../Documents/repo.git.
type zone struct {
	work, gitDir string
}

func newZone(t testing.TB) zone {
	t.Helper()
	dir := t.TempDir()
	z := zone{work: filepath.Join(dir, "data"), gitDir: filepath.Join(dir, "repo.git")}
	if err := os.Mkdir(z.work, 0o700); err != nil {
		t.Fatal(err)
	}
	return z
}

func (z zone) open(t testing.TB) *Repo {
	t.Helper()
	r, err := Open(z.gitDir, z.work)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func (z zone) write(t testing.TB, rel, content string) {
	t.Helper()
	p := filepath.Join(z.work, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (z zone) symlink(t testing.TB, target, rel string) {
	t.Helper()
	p := filepath.Join(z.work, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func (z zone) remove(t testing.TB, rel string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(z.work, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}

// headFiles reads HEAD's tree back through go-git: path -> content, links
// as "-> target", executables with a trailing " (x)".
func headFiles(t testing.TB, r *Repo) map[string]string {
	t.Helper()
	l, err := r.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	_, h, err := r.readHead()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	if h.IsZero() {
		return out
	}
	c, err := object.GetCommit(r.st, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.treeEntries(c.TreeHash, "", func(name string, te object.TreeEntry) {
		b, err := object.GetBlob(r.st, te.Hash)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := b.Reader()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rd)
		_ = rd.Close()
		if err != nil {
			t.Fatal(err)
		}
		switch te.Mode {
		case filemode.Symlink:
			out[name] = "-> " + string(data)
		case filemode.Executable:
			out[name] = string(data) + " (x)"
		default:
			out[name] = string(data)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func commitCount(t testing.TB, r *Repo) int {
	t.Helper()
	log, err := r.Log("", 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(log)
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// gitCLI runs the real git against the zone the way shed_exec will: git
// directory and work tree given explicitly, no system or global config,
// optional locks off (read-only). It skips the test when git is missing.
func (z zone) gitCLI(t testing.TB, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = z.work
	cmd.Env = []string{"GIT_DIR=" + z.gitDir, "GIT_WORK_TREE=" + z.work, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + t.TempDir(), "GIT_OPTIONAL_LOCKS=0", "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
