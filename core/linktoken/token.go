package linktoken

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

const (
	idLen  = 16 // 128 random bits
	macLen = 16
	domain = "fileshed-link-v1"
)

// ErrInvalid reports a token that is malformed or not signed with this key.
var ErrInvalid = errors.New("linktoken: invalid token")

// Signer makes and checks tokens with one key. It is safe for concurrent use.
type Signer struct{ key []byte }

// New returns a signer for key (at least 16 bytes).
func New(key []byte) (*Signer, error) {
	if len(key) < 16 {
		return nil, errors.New("linktoken: the key needs at least 16 bytes")
	}
	return &Signer{key: append([]byte(nil), key...)}, nil
}

// Issue makes a new random link: its id (hex, what the database stores) and its token.
func (s *Signer) Issue() (id, token string) {
	raw := make([]byte, idLen, idLen+macLen)
	_, _ = rand.Read(raw) // crypto/rand never fails on Linux (Go 1.24+ panics instead)
	return hex.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(append(raw, s.mac(raw)...))
}

// TokenFor rebuilds the token of link id (hex, from Issue); "" when id is not one.
func (s *Signer) TokenFor(id string) string {
	raw, err := hex.DecodeString(id)
	if err != nil || len(raw) != idLen {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(append(raw, s.mac(raw)...))
}

// Verify checks token and returns the link id it carries; ErrInvalid when it is malformed
// or its MAC does not match (compared in constant time).
func (s *Signer) Verify(token string) (string, error) {
	if len(token) != base64.RawURLEncoding.EncodedLen(idLen+macLen) {
		return "", ErrInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != idLen+macLen {
		return "", ErrInvalid
	}
	if !hmac.Equal(raw[idLen:], s.mac(raw[:idLen])) {
		return "", ErrInvalid
	}
	// Why re-encode: base64 decoding tolerates some non-canonical trailing bits, so two
	// spellings could carry the same id; only the canonical one is accepted.
	if base64.RawURLEncoding.EncodeToString(raw) != token {
		return "", ErrInvalid
	}
	return hex.EncodeToString(raw[:idLen]), nil
}

func (s *Signer) mac(id []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(domain))
	m.Write(id)
	return m.Sum(nil)[:macLen]
}

// NewKey is a new random key (32 bytes).
func NewKey() []byte {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand never fails on Linux (Go 1.24+ panics instead)
	return key
}

// LoadKey returns secret when it is set, else the key kept in the file path, creating it
// (32 random bytes, mode 0600, exclusively: two servers starting at once agree) when
// missing. A key file readable by others is refused.
func LoadKey(secret, path string) ([]byte, error) {
	if secret != "" {
		if len(secret) < 16 {
			return nil, errors.New("links.secret: at least 16 characters")
		}
		return []byte(secret), nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		key := NewKey()
		if _, err := f.Write(key); err != nil {
			f.Close()
			return nil, fmt.Errorf("links key: write: %w", bareErr(err))
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("links key: sync: %w", bareErr(err))
		}
		return key, f.Close()
	case !errors.Is(err, fs.ErrExist):
		return nil, fmt.Errorf("links key: create: %w", bareErr(err))
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("links key: %w", bareErr(err))
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("links key: the key file is readable by other users (mode %v): chmod 600 it", info.Mode().Perm())
	}
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("links key: %w", bareErr(err))
	}
	if len(key) < 16 {
		// A crash between create and write leaves a short file: refuse rather than sign
		// with a guessable key.
		return nil, errors.New("links key: the key file is shorter than 16 bytes: delete it to make a new one (this voids every link)")
	}
	return key, nil
}

// bareErr drops the *fs.PathError wrapper, whose message holds the host path.
func bareErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
