//go:build fileshed_inprocess_locks

package core

// inProcessLocksOnly forces the in-process Locker whatever state.driver says. Only a binary
// built with -tags fileshed_inprocess_locks has it: the negative control of the replicas
// end-to-end test (replicas_e2e_test.go), which must see several replicas lose writes
// without shared locks, so that the test is known to be able to fail. It is a build tag,
// not a valve or a flag, so that no shipped binary can be switched to it.
const inProcessLocksOnly = true
