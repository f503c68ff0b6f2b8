// Package admin is the operator's command line, `fileshed admin ...`: quotas, locks, the
// audit trail, a read-only look into any zone, backup, restore and verification of a
// storage directory, with or without a server running on it. It parses arguments with kong
// and calls core's Admin* operations; it never imports handlers or net/http.
package admin
