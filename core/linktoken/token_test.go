package linktoken

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestVerify(t *testing.T) {
	s, _ := New([]byte("0123456789abcdef0123"))
	other, _ := New([]byte("another deployment's key"))
	id, tok := s.Issue()
	if got, err := s.Verify(tok); err != nil || got != id {
		t.Fatalf("Verify(own token) = %q, %v; want %q", got, err, id)
	}
	if s.TokenFor(id) != tok || s.TokenFor("zz") != "" {
		t.Error("TokenFor does not rebuild the token")
	}
	flipped := []byte(tok)
	flipped[5] ^= 1
	_, otherTok := other.Issue()
	for name, bad := range map[string]string{
		"one bit flipped": string(flipped), "other key": otherTok, "empty": "", "truncated": tok[:20],
		"too long": tok + "A", "not base64": tok[:len(tok)-1] + "*", "path": "../../etc/passwd",
	} {
		if _, err := s.Verify(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestLoadKey(t *testing.T) {
	p := filepath.Join(t.TempDir(), "links.key")
	k1, err := LoadKey("", p)
	if err != nil || len(k1) != 32 {
		t.Fatal(k1, err)
	}
	if info, _ := os.Stat(p); info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v", info.Mode().Perm())
	}
	k2, err := LoadKey("", p)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatal("second start did not reuse the key", err)
	}
	if k, err := LoadKey("a secret of enough length", p); err != nil || string(k) != "a secret of enough length" {
		t.Fatal(k, err)
	}
	if _, err := LoadKey("short", p); err == nil {
		t.Error("short secret accepted")
	}
	_ = os.Chmod(p, 0o644)
	if _, err := LoadKey("", p); err == nil {
		t.Error("world-readable key file accepted")
	}
	short := filepath.Join(t.TempDir(), "links.key")
	_ = os.WriteFile(short, []byte("x"), 0o600)
	if _, err := LoadKey("", short); err == nil {
		t.Error("truncated key file accepted")
	}
}
