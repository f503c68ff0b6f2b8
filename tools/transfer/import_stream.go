package transfer

import (
	"errors"
	"io"

	"github.com/fileshed/fileshed/core"
)

// upstream is an import's body from Open WebUI as the write reads it through the
// transaction's meter (core.Tx.Meter: max_file_size_mb and the quota as the bytes arrive):
// it counts what arrived and keeps why the connection failed.
type upstream struct {
	body     io.Reader
	n        int64
	progress func()
	readErr  error
}

func (u *upstream) Read(p []byte) (int, error) {
	n, err := u.body.Read(p)
	u.n += int64(n)
	if n > 0 {
		u.progress()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		u.readErr = err
	}
	return n, err
}

// failure explains why the write of an import failed: refused, the meter's refusal (size
// or quota: core.Metered.Refused), the connection to Open WebUI, or the write itself.
func (u *upstream) failure(err error, refused *core.Error, z *core.Zone, name string) *core.Error {
	switch {
	case refused != nil:
		return refused
	case u.readErr != nil:
		return core.Errf(core.AuthUnavailable, "Open WebUI stopped sending %s after %d bytes: nothing kept", name, u.n).
			With("file", name).With("received", u.n).Because(u.readErr).
			WithHint("The connection to Open WebUI dropped: call shed_import again")
	}
	return core.WriteError(err, z, name)
}
