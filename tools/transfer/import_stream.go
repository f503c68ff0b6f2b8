package transfer

import (
	"context"
	"errors"
	"io"

	"github.com/fileshed/fileshed/core"
)

// importChunk is how much quota an import reserves at a time beyond what Open WebUI
// announced: a lying or absent size costs one reservation per chunk, not per read.
const importChunk = 8 << 20

// metered passes an upstream body to the atomic write path while enforcing, as the bytes
// arrive, max_file_size_mb (never trusting a Content-Length) and the quota (growing the
// reservation; concurrent imports reserve in the same conditional UPDATE, so together
// they never overshoot). It stops the write with the first refusal; failure says why.
type metered struct {
	ctx  context.Context
	r    *core.Reservation
	body io.Reader
	name string
	max  int64
	n    int64
	// progress is called after each read that brought bytes (the stall watchdog).
	progress func()
	refusal  *core.Error // size or quota refusal
	readErr  error       // the upstream connection failed
}

func (m *metered) Read(p []byte) (int, error) {
	// Read at most one byte past the limit: enough to know the file is too large.
	if room := m.max - m.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := m.body.Read(p)
	if m.n+int64(n) > m.max {
		m.refusal = core.Errf(core.FileTooLarge, "%s is larger than max_file_size_mb (%d MB): import stopped, nothing kept", m.name, m.max>>20).
			With("file", m.name).With("limit", m.max).
			WithHint("Ask an administrator to raise max_file_size_mb, or split the file before attaching it")
		return 0, m.refusal
	}
	if need := m.n + int64(n) - m.r.Reserved.Bytes; need > 0 {
		if gerr := m.grow(need); gerr != nil {
			return 0, gerr
		}
	}
	m.n += int64(n)
	if n > 0 {
		m.progress()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		m.readErr = err
	}
	return n, err
}

// grow reserves a chunk (capped by the size limit), or exactly what is needed when a
// whole chunk no longer fits the quota.
func (m *metered) grow(need int64) error {
	step := max(need, min(importChunk, m.max-m.r.Reserved.Bytes))
	err := m.r.Grow(m.ctx, core.Amount{Bytes: step})
	if e, ok := core.AsError(err); ok && e.Code == core.QuotaExceeded && step > need {
		err = m.r.Grow(m.ctx, core.Amount{Bytes: need})
	}
	if err != nil {
		e, _ := core.AsError(err)
		m.refusal = e.With("file", m.name)
		return m.refusal
	}
	return nil
}

// failure explains why the write of an import failed.
func (m *metered) failure(err error, z *core.Zone) *core.Error {
	switch {
	case m.refusal != nil:
		return m.refusal
	case m.readErr != nil:
		return core.Errf(core.AuthUnavailable, "Open WebUI stopped sending %s after %d bytes: nothing kept", m.name, m.n).
			With("file", m.name).With("received", m.n).Because(m.readErr).
			WithHint("The connection to Open WebUI dropped: call shed_import again")
	}
	return core.WriteError(err, z, m.name)
}
