package crypt

import (
	"crypto/cipher"
	"errors"
	"fmt"
	"io"
)

// reader opens a sealed stream segment by segment. It reads one byte past each full segment
// to learn whether that segment is the final one; that byte is kept for the next segment.
type reader struct {
	src   io.Reader
	aead  cipher.AEAD
	nonce [nonceSize]byte
	buf   []byte // a sealed segment plus the look-ahead byte
	plain []byte // authenticated plaintext not yet returned, an alias into buf
	carry bool   // buf[sealedSize] holds the first byte of the next segment
	index int64
	done  bool  // the final segment has been returned
	err   error // sticky
}

// NewReader returns a reader of the plaintext sealed in src under key. It reads the header at
// once (ErrFormat when src is not in this format). It never returns a byte of a segment before
// that segment authenticated: a tag failure, a segment out of order, an unexpected end, a
// missing final segment or data after it give an error wrapping ErrAuth.
func NewReader(src io.Reader, key *Key) (io.Reader, error) {
	header := make([]byte, HeaderSize)
	if n, err := io.ReadFull(src, header); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) && IsSealed(header[:n]) {
			return nil, fmt.Errorf("%w: truncated header", ErrAuth)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: %d bytes is too short", ErrFormat, n)
		}
		return nil, err
	}
	aead, err := fileAEAD(key, header)
	if err != nil {
		return nil, err
	}
	return &reader{src: src, aead: aead, buf: make([]byte, sealedSize+1)}, nil
}

// Read returns authenticated plaintext, loading the next segment when the current one is used up.
func (r *reader) Read(p []byte) (int, error) {
	if err := r.fill(); err != nil {
		return 0, err
	}
	n := copy(p, r.plain)
	r.plain = r.plain[n:]
	return n, nil
}

// WriteTo writes the plaintext to dst straight from the segment buffer (io.Copy uses it),
// saving the copy Read makes. It stops at the first segment that does not authenticate.
func (r *reader) WriteTo(dst io.Writer) (int64, error) {
	var total int64
	for {
		if err := r.fill(); errors.Is(err, io.EOF) {
			return total, nil
		} else if err != nil {
			return total, err
		}
		n, err := dst.Write(r.plain)
		r.plain = r.plain[n:]
		total += int64(n)
		if err == nil && len(r.plain) > 0 {
			err = io.ErrShortWrite
		}
		if err != nil {
			return total, err
		}
	}
}

// fill loads segments until some plaintext is pending; io.EOF after the final one.
func (r *reader) fill() error {
	for len(r.plain) == 0 {
		if r.err != nil {
			return r.err
		}
		if r.done {
			return io.EOF
		}
		r.err = r.next()
	}
	return nil
}

// next reads and opens the next segment into r.plain.
func (r *reader) next() error {
	have := 0
	if r.carry {
		r.buf[0] = r.buf[sealedSize]
		have = 1
	}
	n, err := io.ReadFull(r.src, r.buf[have:])
	n += have
	final := false
	switch {
	case err == nil:
		r.carry = true
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		final, r.carry = true, false
		if n < tagSize {
			return fmt.Errorf("%w: segment %d: unexpected end of data", ErrAuth, r.index)
		}
	default:
		return err
	}
	sealed := r.buf[:min(n, sealedSize)]
	plain, err := openSegment(r.aead, &r.nonce, sealed, r.index, final)
	if err != nil {
		return err
	}
	r.plain, r.done = plain, final
	r.index++
	return nil
}
