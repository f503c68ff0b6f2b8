package core

import (
	"context"
	"sync"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// auditQueue bounds the audit entries waiting to be written; past it entries are dropped
// rather than slowing tool calls down.
const auditQueue = 4096

// auditor writes the audit trail (who did what, where, when, outcome) to the state database
// in the background: a tool call never waits for the insert. Close flushes the queue.
type auditor struct {
	mu     sync.Mutex
	ch     chan store.AuditEntry
	closed bool
	done   chan struct{}
}

func (s *Service) startAudit() {
	s.audit.ch = make(chan store.AuditEntry, auditQueue)
	s.audit.done = make(chan struct{})
	go func() {
		defer close(s.audit.done)
		for e := range s.audit.ch {
			// Why ignore errors: the trail is best effort; a failed insert must not fail or
			// block the calls it describes.
			_ = s.timed("db_audit", func() error { return s.db.Audit(context.Background(), e) })
		}
	}()
}

// Audit records one tool call: the caller, the tool, the zone and zone-relative path it
// named, and the outcome ("OK" or the error code). It never blocks.
func (s *Service) Audit(c Caller, tool, zone, path, outcome string) {
	e := store.AuditEntry{At: time.Now(), UserID: c.UserID, ConvID: c.ConvID, Tool: tool,
		Zone: zone, Path: Shorten(path), Outcome: outcome}
	s.audit.mu.Lock()
	defer s.audit.mu.Unlock()
	if s.audit.closed {
		return
	}
	select {
	case s.audit.ch <- e:
	default: // queue full: drop rather than block the call
	}
}

// stopAudit flushes the queued entries (Service.Close).
func (s *Service) stopAudit() {
	s.audit.mu.Lock()
	if s.audit.closed {
		s.audit.mu.Unlock()
		return
	}
	s.audit.closed = true
	close(s.audit.ch)
	s.audit.mu.Unlock()
	<-s.audit.done
}
