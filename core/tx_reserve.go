package core

import (
	"errors"
	"io"
	"io/fs"
	"strings"
)

// What a transaction needs of the quota, and the folders it makes (issue 35 item 1): a
// family declares it (Edit.Quota); the transaction reserves it, charges the folders its
// file system makes, meters a download of unknown size and settles it. No family reserves
// by itself.

// Quota is what a change needs of its owner's quota (Edit.Quota).
type Quota struct {
	// Size is the file the change writes, checked against max_file_size_mb (-1: no single
	// file); in a versioned zone its history is reserved too.
	Size int64
	// Growth is what the change adds to its owner's usage: bytes, and names (files and
	// folders); negative parts reserve nothing.
	Growth Amount
	// Plan, when set, tells Size and Growth once Begin holds the locks and has described
	// the targets (Tx.Target): for a change whose need depends on what it finds there (the
	// old size of the file a save replaces, a scanned tree). Its error ends the transaction.
	Plan func(tx *Tx) (size int64, growth Amount, err error)
}

// reserveDeclared reserves e.Quota, when set, for the owner of the zone the change lands
// in (its last step's): Begin's last check, with the locks held.
func (tx *Tx) reserveDeclared() error {
	q := tx.e.Quota
	if q == nil {
		return nil
	}
	size, growth := q.Size, q.Growth
	if q.Plan != nil {
		var err error
		if size, growth, err = q.Plan(tx); err != nil {
			return err
		}
	}
	return tx.reserve(tx.e.Steps[len(tx.e.Steps)-1].Zone, size, growth)
}

// MakeDir makes the folder dir and its missing parents (0700): a declared folder, or one on
// the way to a declared place (a file's parents). The folders it makes are reserved first
// from the transaction's quota (QUOTA_EXCEEDED when they do not fit) and counted when it
// settles: the transaction must declare Edit.Quota (ErrNoQuota otherwise, a family's
// mistake). Use it inside Apply.
func (t *TxFs) MakeDir(dir string) error {
	if err := t.allowParent(dir); err != nil {
		return err
	}
	if t.tx.r == nil {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: ErrNoQuota}
	}
	return t.tx.r.mkdirAll(t.tx.ctx, t.z, dir)
}

// allowParent refuses MakeDir of a folder that is neither declared (or below a declared
// place) nor a parent of a declared place, wherever it lands once its links are resolved.
func (t *TxFs) allowParent(dir string) error {
	p, err := t.place(dir, true)
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	if t.declares(p) {
		return nil
	}
	for _, d := range t.declared {
		if p == "" || strings.HasPrefix(d, p+"/") {
			return nil
		}
	}
	return &fs.PathError{Op: "mkdir", Path: dir, Err: ErrUndeclared}
}

// ErrNoQuota is a folder made, or a body metered, in a transaction that declared no
// Edit.Quota: a family's mistake, answered as INTERNAL_ERROR, never done.
var ErrNoQuota = errors.New("the transaction declared no quota")

// meterChunk is how much quota a metered body reserves at a time beyond what was declared:
// a lying or absent size costs one reservation per chunk, not per read.
const meterChunk = 8 << 20

// Meter passes body (a download whose announced size may lie) to a write of the
// transaction while enforcing, as the bytes arrive, the limit max (FILE_TOO_LARGE past it,
// never trusting a Content-Length) and the quota: the transaction's reservation grows by
// chunks (concurrent writers reserve in the same conditional UPDATE, so together they never
// overshoot). It stops the write with the first refusal (Metered.Refused); name names the
// file in errors.
func (tx *Tx) Meter(body io.Reader, name string, max int64) *Metered {
	return &Metered{tx: tx, body: body, name: name, max: max}
}

// Metered is a body read through Tx.Meter.
type Metered struct {
	tx      *Tx
	body    io.Reader
	name    string
	max, n  int64
	refusal *Error // size or quota refusal
}

func (m *Metered) Read(p []byte) (int, error) {
	// Read at most one byte past the limit: enough to know the file is too large.
	if room := m.max - m.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := m.body.Read(p)
	if m.n+int64(n) > m.max {
		m.refusal = Errf(FileTooLarge, "%s is larger than max_file_size_mb (%d MB): import stopped, nothing kept", m.name, m.max>>20).
			With("file", m.name).With("limit", m.max).
			WithHint("Ask an administrator to raise max_file_size_mb, or split the file before attaching it")
		return 0, m.refusal
	}
	if need := m.n + int64(n) - m.reserved(); need > 0 {
		if gerr := m.grow(need); gerr != nil {
			return 0, gerr
		}
	}
	m.n += int64(n)
	return n, err
}

// reserved is the bytes the transaction holds for the body.
func (m *Metered) reserved() int64 {
	if m.tx.r == nil {
		return 0
	}
	return m.tx.r.Reserved.Bytes
}

// grow reserves a chunk (capped by the size limit), or exactly what is needed when a
// whole chunk no longer fits the quota.
func (m *Metered) grow(need int64) error {
	r := m.tx.r
	if r == nil {
		m.refusal = Errf(InternalError, "Cannot meter %s", m.name).Because(ErrNoQuota)
		return m.refusal
	}
	step := max(need, min(meterChunk, m.max-r.Reserved.Bytes))
	err := r.Grow(m.tx.ctx, Amount{Bytes: step})
	if e, ok := AsError(err); ok && e.Code == QuotaExceeded && step > need {
		err = r.Grow(m.tx.ctx, Amount{Bytes: need})
	}
	if err != nil {
		e, ok := AsError(err)
		if !ok {
			e = QuotaErr("Cannot reserve the quota", err)
		}
		m.refusal = e.With("file", m.name)
		return m.refusal
	}
	return nil
}

// Refused is the size or quota refusal that stopped the body (nil: none).
func (m *Metered) Refused() *Error { return m.refusal }

// run runs fn, a transaction's change in Apply, then records the ownership of the files it
// reports it created (Change.Created) in z with the Edit's mode.
func (tx *Tx) run(z *Zone, fn func() (Change, error)) (Change, error) {
	ch, err := fn()
	if err == nil && len(ch.Created) > 0 {
		err = tx.s.RecordGroupFiles(tx.ctx, tx.c, z, tx.e.Mode, ch.Created...)
	}
	return ch, err
}
