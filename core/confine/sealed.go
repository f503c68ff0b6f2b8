package confine

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"syscall"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/crypt"
)

// ErrNoKey refuses to open an encrypted file in an Fs that has no key for it (RefuseSealed):
// its bytes are ciphertext, never content.
var ErrNoKey = errors.New("an encrypted file, and no key to read it")

// ErrSealedInPlace refuses an in-place change (append, read-write, WriteAt) of a file in a
// sealed Fs: sealed files are only ever replaced whole.
var ErrSealedInPlace = errors.New("an encrypted file can only be replaced whole")

// Seal makes f encrypt every file it writes and decrypt every sealed file it reads, with
// key (encryption at rest, core/crypt's format). Files without the format's header are read
// as they are (not yet migrated). Call it right after New or Sub, before any use.
func (f *Fs) Seal(key *crypt.Key) { f.key, f.writePlain = key, false }

// ReadSealed makes f decrypt the sealed files it reads with key but write plaintext
// (encryption disabled: files sealed before stay readable).
func (f *Fs) ReadSealed(key *crypt.Key) { f.key, f.writePlain = key, true }

// RefuseSealed makes f, which has no key, refuse to open an encrypted file (ErrNoKey) rather
// than hand out its ciphertext (a user whose key is unavailable).
func (f *Fs) RefuseSealed() { f.refuseSealed = true }

// Sealed reports whether f encrypts what it writes.
func (f *Fs) Sealed() bool { return f.key != nil && !f.writePlain }

// ShareSeal gives f the sealing of other (an editzone or a parent folder seen like its zone).
func (f *Fs) ShareSeal(other *Fs) {
	f.key, f.writePlain, f.refuseSealed = other.key, other.writePlain, other.refuseSealed
}

// SealBytes is b as f would write it to a file: in the encrypted format when f seals, b
// itself otherwise (a before-image the journal holds in the state database).
func (f *Fs) SealBytes(b []byte) ([]byte, error) {
	if !f.Sealed() {
		return b, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(crypt.CipherSize(int64(len(b)))))
	w, err := crypt.NewWriter(&buf, f.key)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// OpenBytes is b as f would read a file of it: decrypted when b is in the encrypted format
// and f has a key (ErrNoKey when f refuses sealed files), b itself otherwise. Damaged bytes
// are an error wrapping crypt.ErrAuth or crypt.ErrFormat, never their ciphertext.
func (f *Fs) OpenBytes(b []byte) ([]byte, error) {
	if !crypt.IsSealed(b) {
		return b, nil
	}
	if f.key == nil {
		if f.refuseSealed {
			return nil, ErrNoKey
		}
		return b, nil
	}
	r, err := crypt.NewReaderAt(bytes.NewReader(b), int64(len(b)), f.key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, r.Size())
	if n, err := r.ReadAt(out, 0); n < len(out) || err != nil && !errors.Is(err, io.EOF) {
		return nil, cmpErr(err, io.ErrUnexpectedEOF)
	}
	return out, nil
}

// cmpErr is err, or def when err is nil or io.EOF.
func cmpErr(err, def error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return def
	}
	return err
}

// SameSeal reports whether a file's bytes mean the same in a and b, so that a rename from
// one to the other keeps it readable.
func SameSeal(a, b *Fs) bool {
	if (a.key == nil) != (b.key == nil) {
		return false
	}
	return a.key == nil || *a.key == *b.key
}

// Raw returns a view of the same zone that neither encrypts nor decrypts (migration and
// its undoing). It shares f's directory handle: do not Close it, and do not use it after f
// is closed.
func (f *Fs) Raw() *Fs { return &Fs{root: f.root, dir: f.dir} }

// sealedSize returns the plaintext size of the regular file c whose on-disk size is size,
// and whether it is sealed. A file too short for the format, or without its header, is not.
func (f *Fs) sealedSize(c string, size int64) (int64, bool) {
	if size < crypt.HeaderSize {
		return size, false
	}
	h, err := f.root.OpenFile(rel(c), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return size, false
	}
	defer h.Close()
	return SealedSize(h, size)
}

// SealedSize returns the plaintext size of the open file h whose on-disk size is size, and
// whether it is sealed (the format's header and a possible size).
func SealedSize(h io.ReaderAt, size int64) (int64, bool) {
	if size < crypt.HeaderSize || !HasMagic(h) {
		return size, false
	}
	plain, err := crypt.PlainSize(size)
	if err != nil {
		return size, false
	}
	return plain, true
}

// HasMagic reports whether h starts with the encrypted format's magic.
func HasMagic(h io.ReaderAt) bool {
	var magic [8]byte
	_, err := h.ReadAt(magic[:], 0)
	return err == nil && crypt.IsSealed(magic[:])
}

// plainInfo gives the plaintext size of a sealed regular file described by fi (the name
// c); other entries pass unchanged.
func (f *Fs) plainInfo(c string, fi os.FileInfo) os.FileInfo {
	if f.key == nil || fi == nil || !fi.Mode().IsRegular() {
		return fi
	}
	if size, ok := f.sealedSize(c, fi.Size()); ok {
		return sizedInfo{FileInfo: fi, size: size}
	}
	return fi
}

// sizedInfo overrides the size of a FileInfo (a sealed file's plaintext size).
type sizedInfo struct {
	fs.FileInfo
	size int64
}

func (i sizedInfo) Size() int64 { return i.size }

// openSealed wraps the file just opened for c with flag when f is sealed: a sealed regular
// file opened for reading decrypts; a file opened to be written from scratch encrypts; an
// in-place change of a non-empty file is refused.
func (f *Fs) openSealed(of *os.File, c string, flag int) (afero.File, error) {
	plain := &file{f: of, name: c, fs: f}
	if f.key == nil && !f.refuseSealed {
		return plain, nil
	}
	fi, err := of.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return plain, nil // directories list through plain, whose entries get plaintext sizes
	}
	if f.key == nil {
		if HasMagic(of) {
			return nil, ErrNoKey
		}
		return plain, nil
	}
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		if !HasMagic(of) {
			return plain, nil // not encrypted (yet)
		}
		// A size no plaintext has (cut short) is ErrFormat: never served raw.
		r, err := crypt.NewReaderAt(of, fi.Size(), f.key)
		if err != nil {
			return nil, err
		}
		return &sealedFile{file: plain, r: r}, nil
	case os.O_WRONLY:
		if f.writePlain {
			return plain, nil
		}
		if flag&os.O_APPEND == 0 && (flag&os.O_TRUNC != 0 || fi.Size() == 0) {
			w, err := crypt.NewWriter(of, f.key)
			if err != nil {
				return nil, err
			}
			return &sealingFile{file: plain, w: w}, nil
		}
	}
	if f.writePlain {
		return plain, nil
	}
	return nil, ErrSealedInPlace
}

// IsSealedFile reports whether f was opened from an encrypted file (and reads decrypted).
func IsSealedFile(f afero.File) bool {
	_, ok := f.(*sealedFile)
	return ok
}

// sealedFile reads a sealed file as plaintext: Read, ReadAt and Seek work on plaintext
// offsets, Stat reports the plaintext size, and writes are refused. Sequential reads decrypt
// each segment once (the ReaderAt keeps the last segment it opened).
type sealedFile struct {
	*file
	r   *crypt.ReaderAt
	off int64
}

func (s *sealedFile) Read(p []byte) (int, error) {
	if s.off >= s.r.Size() {
		return 0, io.EOF
	}
	n, err := s.r.ReadAt(p, s.off)
	s.off += int64(n)
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil // the next Read says EOF
	}
	return n, s.wrap(err)
}

// WriteTo writes the plaintext from the offset to the end into w. From the start of the file
// it streams whole segments (one read, one decryption in place and one write each), the fast
// path of a download; elsewhere it copies through Read.
func (s *sealedFile) WriteTo(w io.Writer) (int64, error) {
	if s.off != 0 {
		return io.Copy(w, struct{ io.Reader }{s})
	}
	r, err := crypt.NewReader(io.NewSectionReader(s.f, 0, crypt.CipherSize(s.r.Size())), s.fs.key)
	if err != nil {
		return 0, s.wrap(err)
	}
	var n int64
	if s.r.Size() < pipeMin {
		n, err = r.(io.WriterTo).WriteTo(w)
	} else {
		n, err = pipeCopy(w, r)
	}
	s.off += n
	return n, s.wrap(err)
}

// pipeMin is the size from which WriteTo overlaps decryption with writing; pipeBuffers
// holds the buffers (pipeDepth of pipeSize bytes a copy).
const (
	pipeMin, pipeSize, pipeDepth = 1 << 20, 128 << 10, 4
)

var pipeBuffers = sync.Pool{New: func() any { return new([pipeSize]byte) }}

// pipeCopy copies r to w with reading (and decrypting) and writing overlapped: a goroutine
// fills buffers while the caller writes the previous one.
func pipeCopy(w io.Writer, r io.Reader) (int64, error) {
	free, full := make(chan []byte, pipeDepth), make(chan []byte, pipeDepth)
	for range pipeDepth {
		b := pipeBuffers.Get().(*[pipeSize]byte)
		defer pipeBuffers.Put(b)
		free <- b[:]
	}
	var rerr error
	stop := make(chan struct{})
	go func() {
		defer close(full)
		for {
			var buf []byte
			select {
			case buf = <-free:
			case <-stop:
				return
			}
			n, err := io.ReadFull(r, buf)
			if n > 0 {
				full <- buf[:n]
			}
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF {
					rerr = err
				}
				return
			}
		}
	}()
	var total int64
	for buf := range full {
		n, err := w.Write(buf)
		total += int64(n)
		if err != nil {
			close(stop)
			for range full {
			}
			return total, err
		}
		free <- buf[:cap(buf)]
	}
	return total, rerr
}

func (s *sealedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.r.ReadAt(p, off)
	return n, s.wrap(err)
}

func (s *sealedFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += s.off
	case io.SeekEnd:
		offset += s.r.Size()
	}
	if offset < 0 {
		return 0, &PathError{Op: "seek", Path: s.name, Err: ErrInvalid}
	}
	s.off = offset
	return offset, nil
}

func (s *sealedFile) Stat() (os.FileInfo, error) {
	fi, err := s.file.Stat()
	if err != nil {
		return nil, err
	}
	return sizedInfo{FileInfo: fi, size: s.r.Size()}, nil
}

func (s *sealedFile) Write([]byte) (int, error)          { return 0, s.inPlace() }
func (s *sealedFile) WriteAt([]byte, int64) (int, error) { return 0, s.inPlace() }
func (s *sealedFile) WriteString(string) (int, error)    { return 0, s.inPlace() }
func (s *sealedFile) Truncate(int64) error               { return s.inPlace() }

// sealingFile writes a new sealed file: Write encrypts; Sync or Close seals the last
// segment first (so a Sync before Close makes the whole file durable; no Write after it).
type sealingFile struct {
	*file
	w      io.WriteCloser
	sealed bool
}

func (s *sealingFile) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	return n, s.wrap(err)
}

func (s *sealingFile) WriteString(str string) (int, error) { return s.Write([]byte(str)) }

// seal writes the last segment once.
func (s *sealingFile) seal() error {
	if s.sealed {
		return nil
	}
	s.sealed = true
	return s.w.Close()
}

func (s *sealingFile) Sync() error {
	if err := s.seal(); err != nil {
		return s.wrap(err)
	}
	return s.file.Sync()
}

func (s *sealingFile) Close() error {
	err := s.seal()
	if cerr := s.file.Close(); err == nil {
		err = cerr
	}
	return s.wrap(err)
}

func (s *sealingFile) Read([]byte) (int, error)           { return 0, s.inPlace() }
func (s *sealingFile) ReadAt([]byte, int64) (int, error)  { return 0, s.inPlace() }
func (s *sealingFile) WriteAt([]byte, int64) (int, error) { return 0, s.inPlace() }
func (s *sealingFile) Seek(int64, int) (int64, error)     { return 0, s.inPlace() }
func (s *sealingFile) Truncate(int64) error               { return s.inPlace() }

// inPlace is the refusal of an in-place change of an encrypted file (sealedFile and
// sealingFile).
func (f *file) inPlace() error {
	return &PathError{Op: "write", Path: f.name, Err: ErrSealedInPlace}
}

// sealTo returns the writer that replace copies into: t itself, or an encrypting writer
// whose Close must run before t is synced.
func (f *Fs) sealTo(t io.Writer) (io.Writer, func() error, error) {
	if !f.Sealed() {
		return t, func() error { return nil }, nil
	}
	w, err := crypt.NewWriter(t, f.key)
	if err != nil {
		return nil, nil, err
	}
	return w, w.Close, nil
}

// dirEntry reports a sealed file's plaintext size from Info.
type dirEntry struct {
	fs.DirEntry
	fs  *Fs
	dir string
}

func (d dirEntry) Info() (fs.FileInfo, error) {
	fi, err := d.DirEntry.Info()
	if err != nil {
		return nil, err
	}
	return d.fs.plainInfo(path.Join(d.dir, d.Name()), fi), nil
}
