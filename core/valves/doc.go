// Package valves is fileshed's configuration: the typed Config and how it is loaded.
//
// Every setting ("valve") is one leaf field of Config. Its YAML key (dotted for nested
// sections, e.g. "auth.mode"), its flag (--auth-mode), its environment variable
// (FILESHED_AUTH_MODE, plus FILESHED_AUTH_API_KEY_FILE for secrets), its range, allowed
// values or minimum length, and its lines in Report and ReportEnv are all derived from that
// field and its struct tags, so the list of valves exists once. The defaults are the top-level
// valves.yaml, embedded by main and handed to Load as bytes; that file is also the
// documentation of every valve.
//
// Validate (run by Load) holds every check of a configuration that needs no storage, so that
// every command refuses the same configurations before anything is created; Warnings lists
// the probable mistakes that do not stop the server. ValidID is the one rule for user and
// group ids (core.ValidID is it).
//
// Where it sits: a leaf under core. main calls Load once at start-up and hands the Config to
// core and handlers; nothing reloads it. It must never import
// github.com/fileshed/fileshed/core (the parent), handlers, openapi, huma, chi or net/http.
package valves
