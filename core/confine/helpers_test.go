package confine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secret = "TOP SECRET"

// zone is a test zone: base/data, with a sibling base/data_evil/secret whose
// name starts with the zone's name (the afero BasePathFs trap).
type zone struct {
	t    testing.TB
	base string // host directory holding the zone and its neighbours
	dir  string // host path of the zone
	fs   *Fs
}

func newZone(t testing.TB) *zone {
	t.Helper()
	base := t.TempDir()
	return newZoneAt(t, base, filepath.Join(base, "data"))
}

func newZoneAt(t testing.TB, base, dir string) *zone {
	t.Helper()
	writeHost(t, filepath.Join(base, "data_evil", "secret"), secret)
	f, err := New(dir)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return &zone{t: t, base: base, dir: dir, fs: f}
}

// host is the host path of a zone-relative name (for setting up and checking).
func (z *zone) host(name string) string { return filepath.Join(z.dir, filepath.FromSlash(name)) }

// write creates a file inside the zone directly on the host.
func (z *zone) write(name, content string) { writeHost(z.t, z.host(name), content) }

// link creates a symlink directly on the host, as a subprocess (ln -s) could.
func (z *zone) link(target, name string) {
	z.t.Helper()
	if err := os.MkdirAll(filepath.Dir(z.host(name)), 0o700); err != nil {
		z.t.Fatal(err)
	}
	if err := os.Symlink(target, z.host(name)); err != nil {
		z.t.Fatal(err)
	}
}

// noLeak fails if err's message contains a host path. A message may repeat
// what the caller gave (given), even when the caller gave a host path.
func (z *zone) noLeak(err error, given ...string) {
	z.t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	for _, g := range given {
		msg = strings.ReplaceAll(msg, g, "")
	}
	if strings.Contains(msg, z.base) {
		z.t.Errorf("error leaks a host path: %q", err)
	}
}

// expect checks err against want (nil means success) and that it leaks nothing.
func (z *zone) expect(err, want error, given ...string) {
	z.t.Helper()
	z.noLeak(err, given...)
	switch {
	case want == nil && err != nil:
		z.t.Errorf("unexpected error: %v", err)
	case want != nil && !errors.Is(err, want):
		z.t.Errorf("error = %v, want %v", err, want)
	}
}

// secretIntact checks that nothing outside the zone changed.
func (z *zone) secretIntact() {
	z.t.Helper()
	b, err := os.ReadFile(filepath.Join(z.base, "data_evil", "secret"))
	if err != nil || string(b) != secret {
		z.t.Fatalf("outside secret changed: %q, %v", b, err)
	}
	ents, err := os.ReadDir(filepath.Join(z.base, "data_evil"))
	if err != nil || len(ents) != 1 {
		z.t.Fatalf("outside directory changed: %v, %v", ents, err)
	}
}

// noTemps fails if a WriteAtomic temporary file is left anywhere under base.
func (z *zone) noTemps() {
	z.t.Helper()
	filepath.WalkDir(z.base, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
			z.t.Errorf("temporary file left: %s", d.Name())
		}
		return nil
	})
}

func writeHost(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readHost(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(b)
}
