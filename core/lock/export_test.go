package lock

// Keys is the number of keys the in-process Locker l tracks (tests).
func Keys(l Locker) int {
	lo := l.(*local)
	lo.mu.Lock()
	defer lo.mu.Unlock()
	return len(lo.keys)
}
