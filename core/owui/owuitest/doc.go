// Package owuitest is a fake Open WebUI for tests: an httptest server that
// answers the REST endpoints fileshed uses (/api/v1/auths/, /api/v1/users/groups,
// /api/v1/groups/ (every group to an admin), /api/v1/groups/id/{id}/users (admins only),
// /api/v1/files/{id}, /api/v1/files/{id}/content, /api/v1/chats/{id}) with
// the JSON shapes of the real Open WebUI, from users, groups, files and
// chats the test adds.
//
// Access rules follow Open WebUI: an unknown or absent bearer token is 401
// {"detail":"Not authenticated"}; a "user" sees only the groups it belongs
// to in /api/v1/groups/, an "admin" all of them (/api/v1/users/groups lists the caller's own
// to both); chats are readable by their owner only, files
// by their owner and by admins; anyone else gets 404 (the real server varies
// between 400, 401 and 404 here). SetDown and SetDelay simulate outages and
// slowness, SetDelivery how one download goes (an error status, no
// Content-Length, slow, cut mid-stream), AddGeneratedFile serves huge files
// without holding them, and Calls counts requests per path.
//
// Where it sits: test support for core/owui and anything above it. It imports
// only core/owui and the standard library, never core, handlers or huma.
package owuitest
