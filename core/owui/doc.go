// Package owui is fileshed's client for the Open WebUI REST API and the only
// place in fileshed that makes outbound HTTP requests.
//
// It verifies a signed-in user's token (GET /api/v1/auths/), lists the user's
// groups, reads file metadata and content, and lists the files attached to a
// conversation, always with the user's own token so Open WebUI enforces its
// own access rules. Verifier caches token checks by SHA-256 of the token.
//
// Where it sits: a leaf under core/. core calls it and translates its
// sentinel errors (ErrUnauthorized, ErrUnavailable, ErrNotFound, ErrInvalidID)
// once. It must never import github.com/fileshed/fileshed/core (its parent),
// handlers, openapi, huma or chi. It never logs, and its errors never contain
// a token. Package owuitest is a fake Open WebUI for tests.
package owui
