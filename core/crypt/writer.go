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
	buf   []byte // one sealed segment (plaintext buf[:n], sealed in place) + a look-ahead byte
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
	return &writer{dst: dst, aead: aead, buf: make([]byte, sealedSize+1)}, nil
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

// ReadFrom reads src to its end straight into the segment buffer (io.Copy uses it), saving
// the copy Write makes. Past a full segment it reads one byte into the look-ahead slot, and
// seals the segment as not final only when that byte arrives.
func (w *writer) ReadFrom(src io.Reader) (int64, error) {
	var total int64
	for w.err == nil {
		var n int
		var err error
		if w.n < SegmentSize {
			n, err = src.Read(w.buf[w.n:SegmentSize])
			w.n += n
		} else if n, err = src.Read(w.buf[sealedSize:]); n == 1 {
			if serr := w.seal(false); serr != nil {
				return total + 1, serr
			}
			w.buf[0], w.n = w.buf[sealedSize], 1
		}
		total += int64(n)
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
	return total, w.err
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
