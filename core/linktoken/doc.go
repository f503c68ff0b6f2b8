// Package linktoken signs and verifies download-link tokens.
//
// A token is base64url(id || mac): id is 16 random bytes (the link's public id, stored in
// the state database) and mac the first 16 bytes of HMAC-SHA256(key, "fileshed-link-v1" ||
// id). Verification recomputes the MAC and compares in constant time, so a token with one
// bit flipped, or made with another deployment's key, is refused before any database
// lookup. The key is the links.secret valve, or a random key (NewKey) kept in a 0600 file
// in the storage directory, created on first start, or, with a PostgreSQL state that
// several replicas share, in the state database (the first replica's wins).
//
// It sits in core/linktoken, a leaf below core, and must never import core, the handlers,
// huma or chi.
package linktoken
