// Package core is fileshed's kernel: what every tool family shares and must go through.
// The storage layout, the one place that joins a storage path (layout.go), zones and paths
// (zone.go, open.go), the one write transaction every change of a zone
// goes through (tx.go, write.go: protected paths, path locks, locked edits, ownership modes,
// size and quota, versioning, settlement; write_stream.go: a result streamed into it as it is
// computed), copies between zones (copy.go, bridge_copy.go),
// the quota and its usage walks (quota.go, usage.go, walk.go, snapshot.go), group ownership
// and membership (ownership.go, companions.go, groups.go, members.go: the members seen),
// the one Locker seam of every exclusion (locks.go over core/lock), versioning (versioning.go, beside.go), the budget of
// expensive calls (budget.go), sealing for encryption at rest (encryption_keys.go,
// encryption_mirror.go), audit, sweeps and recovery after a crash (sweep.go, recover.go; among
// replicas, replicas.go: heartbeats, the leader, the cleaning after dead replicas),
// readiness, operator tools (admin.go, backup.go) and
// the error-code catalogue (codes*.go). It knows nothing of HTTP: the tool families
// (tools/<family>) call it with an explicit Caller and handlers turn the returned *Error
// into the envelope.
//
// Dependency direction: main -> handlers -> tools/<family> -> core -> core/<leaf>. Core never
// imports a family, net/http, huma, chi, handlers or openapi (tests keep this true); leaves
// never import core.
package core
