package confine

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// userZones builds base/users/u1/data (the zone under test) next to
// base/users/u2/data (another user's zone) and base/outside (the host).
func userZones(t *testing.T) (*zone, string) {
	t.Helper()
	base := t.TempDir()
	z := newZoneAt(t, base, filepath.Join(base, "users", "u1", "data"))
	other := filepath.Join(base, "users", "u2", "data")
	writeHost(t, filepath.Join(other, "secret"), secret)
	writeHost(t, filepath.Join(base, "outside", "secret"), secret)
	z.write("sub/file", "inside")
	return z, other
}

// TestRejectsSymlinkOut: a symlink planted in the zone (e.g. by "ln -s" in a
// subprocess, or by an archive) pointing outside gives no read, no write, no
// stat and no Confined; Lstat of the link itself is fine.
func TestRejectsSymlinkOut(t *testing.T) {
	z, other := userZones(t)
	links := []struct{ name, target, use string }{
		{"to_file_abs", filepath.Join(z.base, "outside", "secret"), "to_file_abs"},
		{"to_file_rel", "../../../outside/secret", "to_file_rel"},
		{"to_dir", "../../../outside", "to_dir/secret"},
		{"to_dir_abs", filepath.Join(z.base, "outside"), "to_dir_abs/secret"},
		{"to_sibling_user", "../../u2/data/secret", "to_sibling_user"},
		{"to_sibling_user_dir", "../../u2/data", "to_sibling_user_dir/secret"},
		{"to_zone_prefix_sibling", "../../../data_evil/secret", "to_zone_prefix_sibling"},
		{"dangling_out", "../../../outside/new", "dangling_out"},
		{"dangling_out_dir", "../../../nowhere", "dangling_out_dir/new"},
		{"sub/climbing", "../../x", "sub/climbing"},
		{"chain1", "chain2", "chain1"},
		{"abs_inside", filepath.Join(z.dir, "sub", "file"), "abs_inside"},
		{"root_up", "..", "root_up/u2/data/secret"},
		{"dot_then_up", "sub/../..", "dot_then_up/u2/data/secret"},
	}
	z.link("../../u2/data/secret", "chain3")
	z.link("chain3", "chain2")
	for _, l := range links {
		z.link(l.target, l.name)
	}
	before := hostTree(t, z.base)
	for _, l := range links {
		t.Run(l.name, func(t *testing.T) {
			p := l.use
			_, err := z.fs.Open(p)
			z.expect(err, ErrEscape)
			_, err = z.fs.Create(p)
			z.expect(err, ErrEscape)
			_, err = z.fs.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			z.expect(err, ErrEscape)
			_, err = z.fs.WriteAtomic(p, strings.NewReader("pwned"), 0o600)
			z.expect(err, ErrEscape)
			_, err = z.fs.Stat(p)
			z.expect(err, ErrEscape)
			_, err = z.fs.Confined(p)
			z.expect(err, ErrEscape)
			_, err = z.fs.Resolve(p)
			z.expect(err, ErrEscape)
			z.expect(z.fs.Chmod(p, 0o777), ErrEscape)
			if p == l.name {
				fi, _, err := z.fs.LstatIfPossible(p)
				if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Fatalf("Lstat of the link itself: %v", err)
				}
				if got, err := z.fs.ReadlinkIfPossible(p); err != nil || got != l.target {
					t.Fatalf("Readlink = %q, %v", got, err)
				}
			}
		})
	}
	if after := hostTree(t, z.base); after != before {
		t.Fatalf("host tree changed:\n%s\nbecame\n%s", before, after)
	}
	z.secretIntact()
	if readHost(t, filepath.Join(other, "secret")) != secret {
		t.Fatal("other user's secret changed")
	}
}

// TestRemoveSymlinkOutRemovesOnlyTheLink: Remove/RemoveAll/Rename act on the
// link, never on what it points to.
func TestRemoveSymlinkOutRemovesOnlyTheLink(t *testing.T) {
	z, _ := userZones(t)
	z.link("../../../outside", "out_dir")
	z.link("../../../outside/secret", "out_file")
	if err := z.fs.RemoveAll("out_dir"); err != nil {
		t.Fatal(err)
	}
	if err := z.fs.Rename("out_file", "moved"); err != nil {
		t.Fatal(err)
	}
	if err := z.fs.Remove("moved"); err != nil {
		t.Fatal(err)
	}
	if readHost(t, filepath.Join(z.base, "outside", "secret")) != secret {
		t.Fatal("outside file removed through a link")
	}
}

// TestSymlinkInsideIsFollowed: links that stay in the zone work as links.
func TestSymlinkInsideIsFollowed(t *testing.T) {
	z, _ := userZones(t)
	z.link("sub/file", "in_file")
	z.link("sub", "in_dir")
	z.link("../sub/file", "sub/self_ref")
	z.link("..", "sub/up")
	for _, p := range []string{"in_file", "in_dir/file", "sub/self_ref", "sub/up/sub/file"} {
		t.Run(p, func(t *testing.T) {
			f, err := z.fs.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			if string(b) != "inside" || f.Name() != p {
				t.Fatalf("read %q, name %q", b, f.Name())
			}
			if got, err := z.fs.Confined(p); err != nil || got != p {
				t.Fatalf("Confined = %q, %v", got, err)
			}
		})
	}
}

// TestRejectsSymlinkCreationOut: SymlinkIfPossible checks the target, which
// os.Root.Symlink does not.
func TestRejectsSymlinkCreationOut(t *testing.T) {
	z, _ := userZones(t)
	z.write("a/b/x", "x")
	z.link("a/b", "deep")
	z.link(".", "here")
	tests := []struct {
		name, target, link string
		err                error
	}{
		{"inside", "sub/file", "l1", nil},
		{"inside from a subdir", "../sub/file", "sub/l2", nil},
		{"backslashes normalised", `..\sub\file`, "sub/l3", nil},
		{"to the root", ".", "sub/l4", nil},
		{"dangling inside", "not/yet", "l5", nil},
		{"kernel resolves deep/.. physically", "deep/../../sub/file", "l6", nil},
		{"climbing", "../x", "l7", ErrEscape},
		{"climbing from subdir", "../../x", "sub/l8", ErrEscape},
		{"absolute", "/etc/passwd", "l9", ErrEscape},
		{"absolute inside", filepath.Join(z.dir, "sub", "file"), "l10", ErrEscape},
		{"drive", `C:\x`, "l11", ErrEscape},
		{"backslash climbing", `a\..\..\x`, "l12", ErrEscape},
		{"through a link to the root", "here/../x", "l13", ErrEscape},
		{"link placed under a link to the root", "../x", "here/l14", ErrEscape},
		{"through a planted link out", "sub/../here/../../x", "l15", ErrEscape},
		{"empty", "", "l16", ErrInvalid},
		{"NUL", "a\x00b", "l17", ErrInvalid},
		{"newline", "a\nb", "l18", ErrInvalid},
		{"link name escapes", "sub/file", "../l19", ErrEscape},
		{"link name absolute", "sub/file", "/tmp/l20", ErrEscape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := z.fs.SymlinkIfPossible(tt.target, tt.link)
			z.expect(err, tt.err, tt.target)
			_, lerr := os.Lstat(z.host(tt.link))
			if (tt.err == nil) != (lerr == nil) {
				t.Fatalf("link exists = %v after error %v", lerr == nil, err)
			}
		})
	}
	if b, err := z.fs.Open("l6"); err != nil {
		t.Fatalf("reading through an accepted link: %v", err)
	} else {
		b.Close()
	}
	z.secretIntact()
}

func TestConfined(t *testing.T) {
	z, _ := userZones(t)
	z.link("sub", "in_dir")
	z.link("missing_target", "dangling_in")
	z.link("../../../outside", "out_dir")
	z.link("../../../outside/new", "dangling_out")
	z.link("nonexist/../out_dir", "tricky")
	z.link("loop2", "loop1")
	z.link("loop1", "loop2")
	tests := []struct {
		name, in, want string
		err            error
	}{
		{"root", "", "", nil},
		{"file", "sub/file", "sub/file", nil},
		{"cleaned", `./sub\.\file`, "sub/file", nil},
		{"missing tail", "new/dir/file", "new/dir/file", nil},
		{"through link inside", "in_dir/file", "in_dir/file", nil},
		{"missing tail under link inside", "in_dir/new/x", "in_dir/new/x", nil},
		{"dangling inside", "dangling_in", "dangling_in", nil},
		{"below a file", "sub/file/x", "sub/file/x", nil},
		{"link out", "out_dir", "", ErrEscape},
		{"missing tail under link out", "out_dir/new/x", "", ErrEscape},
		{"dangling out", "dangling_out", "", ErrEscape},
		{"missing then dotdot then link out", "tricky", "", ErrEscape},
		{"lexical escape", "../x", "", ErrEscape},
		{"absolute", "/etc/passwd", "", ErrEscape},
		{"invalid", "a\x00", "", ErrInvalid},
		{"loop", "loop1", "", syscall.ELOOP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := z.fs.Confined(tt.in)
			z.expect(err, tt.err)
			if got != tt.want {
				t.Fatalf("Confined(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestResolve: the path a write of a name reaches, each symlink followed, for the rules
// that apply to the place (core's protected paths: proj/lnk -> .git writes proj/.git).
func TestResolve(t *testing.T) {
	z, _ := userZones(t)
	z.link("sub", "in_dir")
	z.link(".git", "sub/lnk")
	z.link("../sub/.GIT/hooks", "sub/up")
	z.link("lnk", "sub/hop")
	z.link("../../../outside/new", "dangling_out")
	z.link("loop2", "loop1")
	z.link("loop1", "loop2")
	tests := []struct {
		name, in, want string
		err            error
	}{
		{"root", "", "", nil},
		{"file", "sub/file", "sub/file", nil},
		{"cleaned", `./sub\.\file`, "sub/file", nil},
		{"missing tail", "new/dir/file", "new/dir/file", nil},
		{"folder link", "in_dir/file", "sub/file", nil},
		{"dangling link", "sub/lnk", "sub/.git", nil},
		{"below a dangling link", "sub/lnk/config", "sub/.git/config", nil},
		{"through a folder link", "in_dir/lnk", "sub/.git", nil},
		{"dotdot in the target", "sub/up/x", "sub/.GIT/hooks/x", nil},
		{"chain", "sub/hop", "sub/.git", nil},
		{"dangling out", "dangling_out", "", ErrEscape},
		{"lexical escape", "../x", "", ErrEscape},
		{"invalid", "a\x00", "", ErrInvalid},
		{"loop", "loop1", "", syscall.ELOOP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := z.fs.Resolve(tt.in)
			z.expect(err, tt.err)
			if got != tt.want {
				t.Fatalf("Resolve(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestConfinedLongChainWithinLimit: 40 hops pass, 41 are a loop (ELOOP).
func TestConfinedLongChainWithinLimit(t *testing.T) {
	z, _ := userZones(t)
	z.link("sub/file", name(0))
	for i := 1; i <= maxHops; i++ {
		z.link(name(i-1), name(i))
	}
	if _, err := z.fs.Confined(name(maxHops - 1)); err != nil {
		t.Fatalf("%d hops: %v", maxHops, err)
	}
	_, err := z.fs.Confined(name(maxHops))
	z.expect(err, syscall.ELOOP)
}

func name(i int) string { return "c" + strings.Repeat("x", i) }

// TestConfinedDeepPath: a path of 2,000 existing directories resolves (one
// descriptor per level, linear work) and still catches a link out at the end.
func TestConfinedDeepPath(t *testing.T) {
	z, _ := userZones(t)
	deep := strings.TrimSuffix(strings.Repeat("d/", 2000), "/")
	if err := z.fs.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := z.fs.Confined(deep + "/x"); err != nil {
		t.Fatal(err)
	}
	// Host paths this deep are too long for os.Symlink, and one target cannot
	// climb 2,000 levels in 4,095 bytes: plant, relative to directories of the
	// zone (os.Root.Symlink does not check targets), deep/out -> 1,000 levels
	// up to mid/up, which climbs the last 1,000 levels and 3 more.
	plant := func(dir, target, name string) {
		d, err := z.fs.root.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if err := d.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	plant(deep[:len(deep)/2], strings.Repeat("../", 1003)+"outside", "up")
	plant(deep, strings.Repeat("../", 1000)+"up", "out")
	start := time.Now()
	_, err := z.fs.Confined(deep + "/out")
	z.expect(err, ErrEscape)
	t.Logf("Confined through 2,000 + 1,000 + 1,000 levels: %v", time.Since(start))
}

// hostTree lists every path under dir with its size, to prove nothing changed.
func hostTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		b.WriteString(p + " " + fi.Mode().String())
		if fi.Mode().IsRegular() {
			c, _ := os.ReadFile(p)
			b.WriteString(" " + string(c))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return b.String()
}
