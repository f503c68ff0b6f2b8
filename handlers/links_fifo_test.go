package handlers_test

import "syscall"

// syscallMkfifo makes a named pipe (setup of the NOT_A_FILE case).
func syscallMkfifo(p string) error { return syscall.Mkfifo(p, 0o600) }
