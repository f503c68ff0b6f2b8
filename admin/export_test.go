package admin

// SetSwapStep replaces the seam called after every rename of the import's swap (tests: a
// process that kills itself there leaves the state a crash leaves).
func SetSwapStep(f func(step string)) { swapStep = f }
