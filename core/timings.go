package core

import "time"

// Timings receives how long the server's internal operations take (git commits, state
// database writes), for the metrics; op is a fixed name, never a user, path or token.
type Timings func(op string, d time.Duration)

// SetTimings installs the receiver of operation durations (nil: none).
func (s *Service) SetTimings(t Timings) { s.timings.Store(&t) }

// timed runs fn and reports its duration as op.
func (s *Service) timed(op string, fn func() error) error {
	start := time.Now()
	err := fn()
	if t := s.timings.Load(); t != nil && *t != nil {
		(*t)(op, time.Since(start))
	}
	return err
}
