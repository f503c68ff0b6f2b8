// Package crypt is fileshed's at-rest encryption: a chunked AEAD file format and the
// wrapping of each user's data key.
//
// # File format (version 1)
//
// The format is the STREAM construction used by Tink's AES-GCM-HKDF streaming AEAD and by
// age's payload, written with the standard library only:
//
//	header (48 bytes): "FSHDENC\x00" | version 1 | 7 zero bytes | 32-byte random salt
//	file key:          HKDF-SHA256(ikm = data key, salt, info = "fileshed file v1" || header[0:16])
//	segments:          AES-256-GCM over 64 KiB plaintext segments, each ciphertext || 16-byte tag
//	nonce:             3 zero bytes | 8-byte big-endian segment counter | final flag (1 or 0)
//
// The fresh salt gives every file its own key, so the counter nonces never repeat under one
// key. The counter detects reordering, the final flag detects truncation at a segment boundary
// and appended data, and an empty file is one empty final segment, so even a file cut right
// after its header fails. Sizes are pure arithmetic (PlainSize, CipherSize), which lets
// ReaderAt serve random plaintext ranges by decrypting only the segments they touch.
//
// Why this and not a library's format: the construction and its parameters are those of
// Tink's AES-GCM-HKDF streaming AEAD (a studied design), but Tink's Go module brings protobuf
// keysets, and age's format is built around its own recipients and ChaCha20-Poly1305; the
// few dozen lines here need only the standard library, which keeps AES-GCM's hardware speed.
// Tink's random nonce prefix is left out: the per-file key already makes every nonce unique.
//
// # Key wrapping
//
// A user's data key (Key) is sealed by Wrap under a key-encryption key (DeriveKEK) with the
// user id as additional data, so a wrapped key copied onto another user does not open.
//
// crypt is a leaf: it imports only the standard library and never imports core.
package crypt
