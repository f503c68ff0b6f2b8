package crypt

import (
	"crypto/cipher"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ReaderAt gives random access to the plaintext of a sealed file (HTTP Range, zip). A ReadAt
// reads and authenticates only the segments it touches and returns no byte of a segment that
// did not authenticate. The last segment opened is kept, so sequential reads smaller than a
// segment open each segment once. It is safe for concurrent use.
type ReaderAt struct {
	src      io.ReaderAt
	aead     cipher.AEAD
	size     int64 // plaintext
	segments int64
	pool     sync.Pool // *segment buffers, one per concurrent ReadAt

	mu   sync.Mutex
	last *segment // the segment opened last, owned by the ReaderAt while here
}

// segment is a buffer holding the authenticated plaintext of one segment.
type segment struct {
	index int64 // -1 when plain holds nothing
	buf   []byte
	plain []byte
}

// NewReaderAt opens the sealed file src of cipherSize bytes under key. It rejects a size no
// plaintext maps to and a header that is not ours (ErrFormat), and authenticates the final
// segment once so that a truncated file or the wrong key fails here (ErrAuth).
func NewReaderAt(src io.ReaderAt, cipherSize int64, key *Key) (*ReaderAt, error) {
	r, err := openAt(src, cipherSize, key)
	if err != nil {
		return nil, err
	}
	s, err := r.open(r.segments - 1)
	if err != nil {
		return nil, err
	}
	r.keep(s)
	return r, nil
}

// Check reports whether src (cipherSize bytes) is a file sealed in this format under key: its
// size is possible and its header and first segment authenticate. It tells an encrypted file
// from a plaintext file that merely starts with the magic.
func Check(src io.ReaderAt, cipherSize int64, key *Key) bool {
	r, err := openAt(src, cipherSize, key)
	if err != nil {
		return false
	}
	_, err = r.open(0)
	return err == nil
}

// openAt checks the size and the header and derives the file key; it opens no segment.
func openAt(src io.ReaderAt, cipherSize int64, key *Key) (*ReaderAt, error) {
	size, err := PlainSize(cipherSize)
	if err != nil {
		return nil, err
	}
	header := make([]byte, HeaderSize)
	if err := readFull(src, header, 0); err != nil {
		return nil, err
	}
	aead, err := fileAEAD(key, header)
	if err != nil {
		return nil, err
	}
	r := &ReaderAt{src: src, aead: aead, size: size, segments: segments(size)}
	r.pool.New = func() any { return &segment{index: -1, buf: make([]byte, sealedSize)} }
	return r, nil
}

// Size returns the plaintext size.
func (r *ReaderAt) Size() int64 { return r.size }

// ReadAt reads len(p) plaintext bytes at off, with io.ReaderAt's contract (io.EOF when it
// reaches the end). On a segment that does not authenticate it returns the bytes of the
// segments before it and an error wrapping ErrAuth.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("crypt: negative offset %d", off)
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		if pos >= r.size {
			return n, io.EOF
		}
		s, err := r.segment(pos / SegmentSize)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], s.plain[pos%SegmentSize:])
		r.keep(s)
	}
	return n, nil
}

// segment returns the authenticated plaintext of segment i, taking the kept one if it is i.
// The caller hands it back with keep.
func (r *ReaderAt) segment(i int64) (*segment, error) {
	r.mu.Lock()
	if s := r.last; s != nil && s.index == i {
		r.last = nil
		r.mu.Unlock()
		return s, nil
	}
	r.mu.Unlock()
	return r.open(i)
}

// open reads and authenticates segment i into a pooled buffer; the final segment is opened
// with the final flag, so a file cut at a segment boundary or extended fails.
func (r *ReaderAt) open(i int64) (*segment, error) {
	s := r.pool.Get().(*segment)
	s.index, s.plain = -1, nil
	start := HeaderSize + i*sealedSize
	sealed := s.buf[:sealedSize]
	final := i == r.segments-1
	if final {
		sealed = s.buf[:CipherSize(r.size)-start]
	}
	if err := readFull(r.src, sealed, start); err != nil {
		r.pool.Put(s)
		return nil, err
	}
	var nonce [nonceSize]byte
	plain, err := openSegment(r.aead, &nonce, sealed, i, final)
	if err != nil {
		r.pool.Put(s)
		return nil, err
	}
	s.index, s.plain = i, plain
	return s, nil
}

// keep makes s the kept segment and returns the one it replaces to the pool.
func (r *ReaderAt) keep(s *segment) {
	r.mu.Lock()
	old := r.last
	r.last = s
	r.mu.Unlock()
	if old != nil {
		r.pool.Put(old)
	}
}

// readFull reads len(p) bytes at off; a short read means the file is shorter than its
// announced size, which is a truncation (ErrAuth).
func readFull(src io.ReaderAt, p []byte, off int64) error {
	n, err := src.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: file shorter than its size (%d of %d bytes at %d)", ErrAuth, n, len(p), off)
	}
	return err
}
