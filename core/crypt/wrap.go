package crypt

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
)

const (
	wrapVersion = 1
	wrapInfo    = "fileshed kek v1|"
	// WrappedSize is the length of a wrapped key: version, nonce, sealed key and tag.
	WrappedSize = 1 + nonceSize + len(Key{}) + tagSize
	// minMaster is the shortest master secret DeriveKEK accepts (FIPS 140-3 asks 112 bits).
	minMaster = 16
)

// DeriveKEK derives a user's key-encryption key from the server's master secret with
// HKDF-SHA256 (info "fileshed kek v1|" + userID). master is a secret of at least 16 bytes
// that the caller validated at start; a shorter one is a programming error and panics.
func DeriveKEK(master []byte, userID string, salt []byte) Key {
	if len(master) < minMaster {
		panic(fmt.Sprintf("crypt: master secret of %d bytes, need at least %d", len(master), minMaster))
	}
	k, err := hkdf.Key(sha256.New, master, salt, wrapInfo+userID, len(Key{}))
	if err != nil {
		panic("crypt: derive kek: " + err.Error()) // unreachable with a 32-byte output and SHA-256
	}
	return Key(k)
}

// Wrap seals the data key dek under kek for userID: AES-256-GCM with a random nonce and the
// user id as additional data. The result (WrappedSize bytes: version | nonce | sealed key) is
// self-contained.
func Wrap(kek *Key, dek *Key, userID string) ([]byte, error) {
	aead, err := newGCM(kek[:])
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+nonceSize, WrappedSize)
	out[0] = wrapVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, fmt.Errorf("crypt: random nonce: %w", err)
	}
	return aead.Seal(out, out[1:], dek[:], []byte(userID)), nil
}

// Unwrap opens a key sealed by Wrap. A wrong kek, another user's id or a changed byte give an
// error wrapping ErrAuth; a wrong length or an unknown version give ErrFormat.
func Unwrap(kek *Key, wrapped []byte, userID string) (Key, error) {
	if len(wrapped) != WrappedSize {
		return Key{}, fmt.Errorf("%w: wrapped key of %d bytes, want %d", ErrFormat, len(wrapped), WrappedSize)
	}
	if wrapped[0] != wrapVersion {
		return Key{}, fmt.Errorf("%w: wrapped key version %d", ErrFormat, wrapped[0])
	}
	aead, err := newGCM(kek[:])
	if err != nil {
		return Key{}, err
	}
	dek, err := aead.Open(nil, wrapped[1:1+nonceSize], wrapped[1+nonceSize:], []byte(userID))
	if err != nil {
		return Key{}, fmt.Errorf("%w: wrapped key does not open for this user", ErrAuth)
	}
	return Key(dek), nil
}
