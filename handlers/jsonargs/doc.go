// Package jsonargs reads a tool call's JSON body as it arrives: the values of the arguments a
// tool knows (strings decoded straight into their final form, other values as raw JSON),
// exactly as encoding/json would read them, without holding the body.
//
// It sits under the HTTP edge (handlers, and MCP through it) as a leaf: it imports only the
// standard library, never the kernel, a family or net/http.
package jsonargs
