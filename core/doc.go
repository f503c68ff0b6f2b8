// Package core is fileshed's hidden core: zones, confinement, commands, versioning, locks,
// groups, quotas and the error-code catalogue. It knows nothing of HTTP: handlers call the
// methods of Service with an explicit Caller and turn the returned *Error into the envelope.
//
// Dependency direction: main -> handlers -> core -> core/<leaf>. Core must never import
// net/http, huma, chi, handlers or openapi (a test keeps this true); leaves never import core.
package core
