// Package lock is the one seam of cross-request mutual exclusion (DESIGN §9): every lock the
// kernel takes — a file's writers, a locked edit's steps, an owner's commands and quota, a
// versioned space's gate and turn, its repository — is a Lock on a logical Key through a
// Locker. The in-process Locker (NewLocal) serves one server with SQLite state; a Locker
// backed by the state database (pglock: PostgreSQL advisory locks) serves several replicas,
// with the same keys and the same guarantees (the conformance suite locktest), so no tool
// knows which one runs. The edge marks each request as one Call (WithCall), which a Locker
// with a bounded pool of sessions admits as a whole.
//
// It is a leaf: it imports nothing of fileshed, and core must never be imported here.
package lock
