package confine_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/crypt"
)

// TestSealBytes: bytes sealed in memory are a sealed file's bytes (read back through a file
// of them, and through OpenBytes), of any size (empty, several segments); a plain Fs leaves
// them as they are; damaged ones (a flipped byte, cut short, the wrong key) are an error,
// never their ciphertext; a Fs without a key refuses them when it refuses sealed files.
func TestSealBytes(t *testing.T) {
	f, dir, _ := sealedFs(t)
	for _, plain := range [][]byte{{}, []byte("small"), bytes.Repeat([]byte("x"), 3*crypt.SegmentSize+5)} {
		sealed, err := f.SealBytes(plain)
		must(t, err)
		if !crypt.IsSealed(sealed) || len(plain) > 0 && bytes.Contains(sealed, plain) {
			t.Fatalf("%d bytes sealed as %.20q", len(plain), sealed)
		}
		back, err := f.OpenBytes(sealed)
		if err != nil || !bytes.Equal(back, plain) {
			t.Fatalf("%d bytes back: %d, %v", len(plain), len(back), err)
		}
		must(t, os.WriteFile(filepath.Join(dir, "s.bin"), sealed, 0o600))
		if b, err := afero.ReadFile(f, "s.bin"); err != nil || !bytes.Equal(b, plain) {
			t.Fatalf("%d bytes through a file: %d, %v", len(plain), len(b), err)
		}
	}
	sealed, err := f.SealBytes([]byte("the secret"))
	must(t, err)
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-3] ^= 1
	other, err := crypt.NewKey()
	must(t, err)
	wrong, _ := confine.New(dir)
	defer wrong.Close()
	wrong.Seal(&other)
	for name, c := range map[string]struct {
		fs *confine.Fs
		b  []byte
	}{"flipped": {f, flipped}, "cut short": {f, sealed[:len(sealed)-1]}, "wrong key": {wrong, sealed}} {
		if b, err := c.fs.OpenBytes(c.b); err == nil || !errors.Is(err, crypt.ErrAuth) && !errors.Is(err, crypt.ErrFormat) {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	plain, _ := confine.New(dir)
	defer plain.Close()
	if b, err := plain.SealBytes([]byte("as is")); err != nil || string(b) != "as is" {
		t.Fatalf("a plain Fs sealed: %q, %v", b, err)
	}
	plain.RefuseSealed()
	if _, err := plain.OpenBytes(sealed); !errors.Is(err, confine.ErrNoKey) {
		t.Fatalf("sealed bytes without a key: %v", err)
	}
}
