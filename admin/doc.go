// Package admin is the operator's command line, `fileshed admin ...`: quotas, locks, the
// audit trail, a read-only look into any zone, backup, restore and verification of a
// storage directory, with or without a server running on it, and the import of an original
// Fileshed storage directory (import_original.go). It parses arguments with kong
// and calls core's Admin* operations (the import reads and writes through core/vcs,
// core/store and core/confine too); it never imports handlers or net/http.
package admin
