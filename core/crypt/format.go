package crypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// HeaderSize is the size of the file header: magic, version, reserved bytes and salt.
const HeaderSize = 48

// SegmentSize is the plaintext size of every segment but the last.
const SegmentSize = 64 << 10

const (
	magic       = "FSHDENC\x00"
	version     = 1
	tagSize     = 16
	nonceSize   = 12
	saltOffset  = 16
	sealedSize  = SegmentSize + tagSize // a full segment on disk
	fileKeyInfo = "fileshed file v1"
)

// Key is a 256-bit AES key: a user's data key, or a key-encryption key.
type Key [32]byte

// ErrAuth reports ciphertext that does not authenticate: tampered, truncated, reordered or
// extended data, or the wrong key. Errors returned by this package wrap it; use errors.Is.
var ErrAuth = errors.New("crypt: authentication failed (tampered, truncated or wrong key)")

// ErrFormat reports data that is not in this format: a missing magic, an unknown version, or a
// size no plaintext size maps to. Errors returned by this package wrap it; use errors.Is.
var ErrFormat = errors.New("crypt: not a fileshed encrypted file")

// NewKey returns a fresh random key from crypto/rand.
func NewKey() (Key, error) {
	var k Key
	if _, err := rand.Read(k[:]); err != nil {
		return Key{}, fmt.Errorf("crypt: random key: %w", err)
	}
	return k, nil
}

// IsSealed reports whether prefix starts with the format's magic. It needs at least the first
// 8 bytes of a file; it says nothing about the key or the integrity (see Check).
func IsSealed(prefix []byte) bool {
	return len(prefix) >= len(magic) && string(prefix[:len(magic)]) == magic
}

// CipherSize returns the size of the sealed file that holds plainSize bytes of plaintext.
// plainSize must not be negative.
func CipherSize(plainSize int64) int64 {
	return HeaderSize + plainSize + segments(plainSize)*tagSize
}

// PlainSize returns the plaintext size of a sealed file of cipherSize bytes, the exact
// inverse of CipherSize. A size that no plaintext size maps to gives ErrFormat.
func PlainSize(cipherSize int64) (int64, error) {
	if cipherSize < HeaderSize+tagSize {
		return 0, fmt.Errorf("%w: %d bytes is too short", ErrFormat, cipherSize)
	}
	body := cipherSize - HeaderSize
	full, rest := body/sealedSize, body%sealedSize
	switch {
	case rest == 0:
		return full * SegmentSize, nil
	case full > 0 && rest <= tagSize:
		// Only an empty file has an empty final segment, and nothing is shorter than a tag.
		return 0, fmt.Errorf("%w: %d bytes is not a possible size", ErrFormat, cipherSize)
	}
	return full*SegmentSize + rest - tagSize, nil
}

// segments returns how many segments hold plainSize bytes: at least one.
func segments(plainSize int64) int64 {
	if plainSize <= 0 {
		return 1
	}
	return (plainSize + SegmentSize - 1) / SegmentSize
}

// newHeader returns a version 1 header with a fresh random salt.
func newHeader() ([]byte, error) {
	h := make([]byte, HeaderSize)
	copy(h, magic)
	h[len(magic)] = version
	if _, err := rand.Read(h[saltOffset:]); err != nil {
		return nil, fmt.Errorf("crypt: random salt: %w", err)
	}
	return h, nil
}

// checkHeader rejects a header that is not ours or of an unknown version.
func checkHeader(h []byte) error {
	if !IsSealed(h) {
		return fmt.Errorf("%w: no magic", ErrFormat)
	}
	if h[len(magic)] != version {
		return fmt.Errorf("%w: unknown version %d", ErrFormat, h[len(magic)])
	}
	if !bytes.Equal(h[len(magic)+1:saltOffset], make([]byte, saltOffset-len(magic)-1)) {
		return fmt.Errorf("%w: reserved header bytes are set", ErrFormat)
	}
	return nil
}

// fileAEAD checks the header and derives the file key from the data key and the header.
func fileAEAD(key *Key, header []byte) (cipher.AEAD, error) {
	if err := checkHeader(header); err != nil {
		return nil, err
	}
	info := fileKeyInfo + string(header[:saltOffset])
	fk, err := hkdf.Key(sha256.New, key[:], header[saltOffset:HeaderSize], info, len(Key{}))
	if err != nil {
		return nil, fmt.Errorf("crypt: file key: %w", err)
	}
	return newGCM(fk)
}

// newGCM returns AES-256-GCM with the standard nonce and tag sizes.
func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("crypt: cipher: %w", err)
	}
	return cipher.NewGCM(block)
}

// segmentNonce fills n with the nonce of segment i.
func segmentNonce(n *[nonceSize]byte, i int64, final bool) {
	binary.BigEndian.PutUint64(n[3:11], uint64(i))
	n[11] = 0
	if final {
		n[11] = 1
	}
}

// openSegment authenticates and decrypts segment i in place, returning the plaintext (an
// alias of sealed). A failure wraps ErrAuth with the segment index.
func openSegment(aead cipher.AEAD, n *[nonceSize]byte, sealed []byte, i int64, final bool) ([]byte, error) {
	segmentNonce(n, i, final)
	plain, err := aead.Open(sealed[:0], n[:], sealed, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: segment %d", ErrAuth, i)
	}
	return plain, nil
}
