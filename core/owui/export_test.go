package owui

// SetMaxEntries lets tests shrink the Verifier cache to exercise eviction.
func SetMaxEntries(v *Verifier, n int) { v.max = n }

// CacheLen reports how many tokens v currently caches.
func CacheLen(v *Verifier) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.order.Len()
}
