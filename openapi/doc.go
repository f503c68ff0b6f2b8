// Package openapi holds fileshed's huma configuration and the clean-up that makes the
// generated OpenAPI document digestible by Open WebUI and by every model provider it forwards
// tool schemas to: no `$schema` property, no type arrays, no anyOf/oneOf/allOf, arrays never
// nullable, unknown properties allowed. The golden document lives in testdata/openapi.json.
//
// Used by handlers and main only; it must never import core or handlers.
package openapi
