package core

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"io/fs"
	"strings"
)

// Content hashes (issue 37): every answer that returns or changes a file's content names its
// version, the first 16 hex digits of the SHA-256 of the plaintext, and every write may name
// the version it was built from (expected_hash): the transaction refuses it, FILE_CHANGED,
// when the file holds something else now. The hash is computed from the bytes as they stream
// (a ContentHash fed by the read or the write itself), never by reading a file a second time.

// HashNew is the expected hash of a file that must not exist yet.
const HashNew = "new"

// hashLen is the number of hex digits of a content hash.
const hashLen = 16

// ContentHash is a running content hash: write the bytes as they stream, then Sum.
type ContentHash struct{ h hash.Hash }

// NewContentHash starts a content hash.
func NewContentHash() *ContentHash { return &ContentHash{h: sha256.New()} }

// Write adds p to the hash; it never fails.
func (c *ContentHash) Write(p []byte) (int, error) { return c.h.Write(p) }

// Sum is the hash of what was written: 16 hex digits.
func (c *ContentHash) Sum() string { return hex.EncodeToString(c.h.Sum(nil))[:hashLen] }

// HashOf is the content hash of b.
func HashOf(b []byte) string {
	h := NewContentHash()
	_, _ = h.Write(b)
	return h.Sum()
}

// FileHash streams the file rel of z (links followed) once and returns its content hash,
// HashNew when it does not exist.
func FileHash(z *Zone, rel string) (string, error) {
	f, err := z.fs.Open(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return HashNew, nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := NewContentHash()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return h.Sum(), nil
}

// CheckExpectedHash validates an expected_hash argument ("" = none): HashNew or 16 hex
// digits, returned lower-case. A family calls it before any work; the transaction checks
// the value against the file (Step.Expect).
func CheckExpectedHash(expected string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(expected))
	if e == "" || e == HashNew {
		return e, nil
	}
	if _, err := hex.DecodeString(e); err != nil || len(e) != hashLen {
		return "", Errf(InvalidParameter, "expected_hash must be the hash of your last read (%d hex digits) or \"new\", got %q", hashLen, Shorten(expected)).
			With("expected_hash", Shorten(expected)).
			WithHint("Pass the hash field of your last shed_read (or of the last write's answer), or expected_hash=\"new\" for a file that must not exist yet")
	}
	return e, nil
}

// ChangedSince is FILE_CHANGED: the file at shown holds current (a hash, or HashNew when it
// does not exist) where the caller expected expected.
func ChangedSince(z *Zone, shown, expected, current string) *Error {
	var e *Error
	switch {
	case current == HashNew:
		e = Errf(FileChanged, "%s does not exist any more: it was deleted or moved since your last read", shown).
			WithHint("Check with shed_tree; to create it again, pass expected_hash=\"new\"")
	case expected == HashNew:
		e = Errf(FileChanged, "%s already exists (expected_hash=\"new\")", shown).
			WithHint("Read it with shed_read first; to replace it anyway, pass expected_hash=%s (details.current_hash)", current)
	default:
		e = Errf(FileChanged, "%s changed since your last read (its hash is %s, not %s): nothing was written", shown, current, expected).
			WithHint("Read it again with shed_read and redo the edit on what it holds now, with expected_hash=%s", current)
	}
	return e.With("path", shown).With("zone", z.Label).With("current_hash", current).With("expected_hash", expected)
}
