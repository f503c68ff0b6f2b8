package lock

// Keys is the number of keys the in-process Locker l tracks (tests).
func Keys(l Locker) int {
	lo := l.(*local)
	lo.mu.Lock()
	defer lo.mu.Unlock()
	return len(lo.keys)
}

// Waiting is the number of requests of k waiting (not granted yet) on the in-process Locker
// l (tests).
func Waiting(l Locker, k Key) int {
	lo := l.(*local)
	lo.mu.Lock()
	defer lo.mu.Unlock()
	e := lo.keys[k]
	if e == nil {
		return 0
	}
	n := e.refs - e.readers
	if e.writer {
		n--
	}
	return n
}
