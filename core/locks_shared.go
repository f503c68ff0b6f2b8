//go:build !fileshed_inprocess_locks

package core

// inProcessLocksOnly is false in every real build: with state.driver postgres the kernel's
// locks are PostgreSQL advisory locks (newLocker). locks_control.go is the negative control.
const inProcessLocksOnly = false
