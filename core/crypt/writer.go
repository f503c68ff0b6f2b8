package crypt

import (
	"crypto/cipher"
	"errors"
	"fmt"
	"io"
)

// errClosed is returned by Write and Close on a closed writer.
var errClosed = errors.New("crypt: write to a closed writer")

// writer seals plaintext into segments. A full segment stays buffered until the next byte
// arrives, because only then is it known not to be the final one.
type writer struct {
	dst   io.Writer
	aead  cipher.AEAD
	nonce [nonceSize]byte
	buf   []byte // one sealed segment: plaintext buf[:n], sealed in place
	n     int
	index int64
	err   error // sticky: the first failure, or errClosed after Close
}

// NewWriter returns a writer that seals what is written to it into dst under key. It writes
// the header at once and seals every full segment as soon as the next byte shows it is not
// the last; Close seals the final segment (an empty one for an empty file) and does not close
// dst. Write or Close after Close return an error.
func NewWriter(dst io.Writer, key *Key) (io.WriteCloser, error) {
	header, err := newHeader()
	if err != nil {
		return nil, err
	}
	aead, err := fileAEAD(key, header)
	if err != nil {
		return nil, err
	}
	if _, err := dst.Write(header); err != nil {
		return nil, err
	}
	return &writer{dst: dst, aead: aead, buf: make([]byte, sealedSize)}, nil
}

// Write buffers p, sealing each full segment once more plaintext follows it.
func (w *writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	written := 0
	for len(p) > 0 {
		if w.n == SegmentSize {
			if err := w.seal(false); err != nil {
				return written, err
			}
		}
		c := copy(w.buf[w.n:SegmentSize], p)
		w.n += c
		written += c
		p = p[c:]
	}
	return written, nil
}

// Close seals the final segment. It does not close dst.
func (w *writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if err := w.seal(true); err != nil {
		return err
	}
	w.err = errClosed
	return nil
}

// seal encrypts the buffered segment in place and writes it out.
func (w *writer) seal(final bool) error {
	segmentNonce(&w.nonce, w.index, final)
	sealed := w.aead.Seal(w.buf[:0], w.nonce[:], w.buf[:w.n], nil)
	if _, err := w.dst.Write(sealed); err != nil {
		w.err = fmt.Errorf("crypt: write segment %d: %w", w.index, err)
		return w.err
	}
	w.index++
	w.n = 0
	return nil
}
