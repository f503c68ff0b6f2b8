// Package pglock is the lock.Locker of several replicas: PostgreSQL advisory locks on the
// state database, which every replica shares.
//
// Each key is one 64-bit advisory lock id: the first 8 bytes of SHA-256 over "fileshed:"
// and the key (keyID). Two different keys collide with a chance of about 2^-64 per pair;
// a collision makes them one lock, which only serialises more than needed (and, should
// it cross the kernel's lock order, a wait ends at its caller's deadline). The ids live in
// the one-key space of pg_advisory_lock, apart from the two-key space of the store's
// migration lock.
//
// Each held lease pins one connection (a session-level pg_advisory_lock or
// pg_advisory_lock_shared): Unlock releases it there and gives the connection back; when
// the release cannot be confirmed the connection is closed, which ends the session and so
// every lock it held. The connections form a bounded pool (Options.Conns); a call holding
// nothing waits for room, a call already holding a lease never does (lock.Call).
//
// Every wait ends with its caller's context. A cancelled wait sends PostgreSQL a cancel
// request and returns once the server stopped waiting, then releases whatever the session
// may hold (the lock can be granted in the instant the cancel arrives, and a session-level
// advisory lock outlives the failed statement); a connection that does not answer is
// closed, which ends its session. Sessions carry client_connection_check_interval, so a
// replica that dies while waiting leaves no waiter behind, and TCP keepalives that end the
// session of a vanished replica within about 30 s.
//
// Loss: a lease held longer than Options.Check is pinged every Check; when its connection
// fails (the database restarted, the session was terminated, the network is gone) Lost is
// closed at once, within Check plus pingTimeout of the failure and well before PostgreSQL
// (keepalives) gives the lock to anyone else. The kernel checks Lost before a change and
// before its commit.
//
// Lock connections need a real session: a pooler in transaction mode (PgBouncer's
// default) in front of PostgreSQL would break advisory locks. It is a leaf: it imports
// core/lock and pgx only.
package pglock
