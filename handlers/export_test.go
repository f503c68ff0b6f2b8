package handlers

import "time"

// SetBodyReadBase shortens the body deadline for a test; it returns the restore function.
func SetBodyReadBase(d time.Duration) func() {
	old := bodyReadBase
	bodyReadBase = d
	return func() { bodyReadBase = old }
}
