package archive

import (
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"strings"
	"time"
)

// Level is the deflate level of the archives Writer writes: the fastest, measured in
// BENCHMARKS.md against the zip CLI (zip -r uses 6, for a few percent less output).
const Level = flate.BestSpeed

// Writer writes a zip archive as a stream, as archive/zip's Writer does (each entry's
// local header, its deflated data and a data descriptor, then the central directory, with
// zip64 records where sizes, offsets or the count need them), for the two kinds of entry
// fileshed writes: regular files and folders. archive/zip keeps every entry's FileHeader
// until Close, a few hundred bytes each (50 MB of server memory for 100,000 files, issue
// 24); this Writer keeps each entry's central directory record already encoded: 46 bytes
// plus its name and extras, what the end of the archive must hold anyway.
type Writer struct {
	bw      *bufio.Writer
	out     *counter // offsets in the archive
	cd      [][]byte // the central directory, in chunks
	entries uint64
	file    *fileWriter // the entry being written
	deflate deflater    // reset for each file: a new one allocates about a megabyte
	rec     []byte      // scratch for one record
	copyBuf []byte      // fileWriter.ReadFrom's buffer, one for every entry
}

// NewWriter starts an archive written to w.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriter(w)
	return &Writer{bw: bw, out: &counter{w: bw}}
}

const (
	u32max        = 1<<32 - 1
	u16max        = 1<<16 - 1
	version20     = 20
	version45     = 45
	madeByUnix    = 3<<8 | version20
	flagSizes     = 0x8   // sizes and CRC in a data descriptor
	flagUTF8      = 0x800 // the name is UTF-8
	methodStore   = 0
	methodFlate   = 8
	extTimeID     = 0x5455
	zip64ID       = 0x0001
	sIFREG        = 0o100000
	sIFDIR        = 0o040000
	msdosDir      = 0x10
	msdosReadOnly = 0x01
)

// entry is what the central directory records of an entry.
type entry struct {
	name             string
	modified         time.Time
	external         uint32
	flags, method    uint16
	crc              uint32
	compressed, size uint64
	offset           uint64
}

// File starts a regular file named name, deflated; its content is what the returned
// writer receives until the next entry or Close.
func (w *Writer) File(name string, modified time.Time, perm fs.FileMode) (io.Writer, error) {
	if err := w.finish(); err != nil {
		return nil, err
	}
	e := &entry{name: name, modified: modified, external: external(sIFREG, perm),
		flags: flagSizes | utf8Flag(name), method: methodFlate, offset: uint64(w.out.n)}
	if err := w.local(e); err != nil {
		return nil, err
	}
	compressed := &counter{w: w.out}
	if w.deflate == nil {
		fw, _ := flate.NewWriter(compressed, Level) // only an invalid level fails
		w.deflate = fw
	} else {
		w.deflate.Reset(compressed)
	}
	if w.copyBuf == nil {
		w.copyBuf = make([]byte, 32<<10)
	}
	w.file = &fileWriter{e: e, deflate: w.deflate, compressed: compressed, crc: crc32.NewIEEE(), buf: w.copyBuf}
	return w.file, nil
}

// Dir adds a folder named name (ending with "/").
func (w *Writer) Dir(name string, modified time.Time, perm fs.FileMode) error {
	if err := w.finish(); err != nil {
		return err
	}
	e := &entry{name: name, modified: modified, external: external(sIFDIR, perm) | msdosDir,
		flags: utf8Flag(name), method: methodStore, offset: uint64(w.out.n)}
	if err := w.local(e); err != nil {
		return err
	}
	w.record(e)
	return nil
}

// Flush sends what is buffered.
func (w *Writer) Flush() error { return w.bw.Flush() }

// Close finishes the last entry and writes the central directory and the end records.
// It does not close the underlying writer.
func (w *Writer) Close() error {
	if err := w.finish(); err != nil {
		return err
	}
	start := w.out.n
	for _, c := range w.cd {
		if _, err := w.out.Write(c); err != nil {
			return err
		}
	}
	end := w.out.n
	records, size, offset := w.entries, uint64(end-start), uint64(start)
	var b []byte
	if records >= u16max || size >= u32max || offset >= u32max {
		b = le32(b, 0x06064b50) // zip64 end of central directory
		b = le64(b, 44)
		b = le16(b, version45)
		b = le16(b, version45)
		b = le32(b, 0)
		b = le32(b, 0)
		b = le64(b, records)
		b = le64(b, records)
		b = le64(b, size)
		b = le64(b, offset)
		b = le32(b, 0x07064b50) // its locator
		b = le32(b, 0)
		b = le64(b, uint64(end))
		b = le32(b, 1)
		records, size, offset = u16max, u32max, u32max
	}
	b = le32(b, 0x06054b50) // end of central directory
	b = le32(b, 0)
	b = le16(b, uint16(records))
	b = le16(b, uint16(records))
	b = le32(b, uint32(size))
	b = le32(b, uint32(offset))
	b = le16(b, 0)
	if _, err := w.out.Write(b); err != nil {
		return err
	}
	return w.bw.Flush()
}

// local writes the local header of e (sizes and CRC come in the data descriptor).
func (w *Writer) local(e *entry) error {
	if len(e.name) > u16max {
		return errors.New("zip: entry name too long")
	}
	date, tm := dosTime(e.modified)
	b := w.rec[:0]
	b = le32(b, 0x04034b50)
	b = le16(b, version20)
	b = le16(b, e.flags)
	b = le16(b, e.method)
	b = le16(b, tm)
	b = le16(b, date)
	b = le32(b, 0)
	b = le32(b, 0)
	b = le32(b, 0)
	b = le16(b, uint16(len(e.name)))
	extra := len(b) + 2 + len(e.name)
	b = le16(b, 0) // the extra's length, set below
	b = append(b, e.name...)
	b = extTime(b, e.modified)
	binary.LittleEndian.PutUint16(b[extra-2-len(e.name):], uint16(len(b)-extra))
	w.rec = b
	_, err := w.out.Write(b)
	return err
}

// record appends the central directory record of e.
func (w *Writer) record(e *entry) {
	date, tm := dosTime(e.modified)
	zip64 := e.compressed >= u32max || e.size >= u32max
	version := uint16(version20)
	if zip64 {
		version = version45
	}
	extra := extTime(nil, e.modified)
	if zip64 || e.offset >= u32max {
		extra = le16(extra, zip64ID)
		extra = le16(extra, 24)
		extra = le64(extra, e.size)
		extra = le64(extra, e.compressed)
		extra = le64(extra, e.offset)
	}
	b := w.rec[:0]
	b = le32(b, 0x02014b50)
	b = le16(b, madeByUnix)
	b = le16(b, version)
	b = le16(b, e.flags)
	b = le16(b, e.method)
	b = le16(b, tm)
	b = le16(b, date)
	b = le32(b, e.crc)
	if zip64 || e.offset >= u32max {
		b = le32(b, u32max)
		b = le32(b, u32max)
	} else {
		b = le32(b, uint32(e.compressed))
		b = le32(b, uint32(e.size))
	}
	b = le16(b, uint16(len(e.name)))
	b = le16(b, uint16(len(extra)))
	b = le16(b, 0) // comment
	b = le16(b, 0) // disk
	b = le16(b, 0) // internal attributes
	b = le32(b, e.external)
	b = le32(b, uint32(min(e.offset, u32max)))
	b = append(b, e.name...)
	b = append(b, extra...)
	w.rec = b
	if n := len(w.cd); n == 0 || len(w.cd[n-1])+len(b) > cap(w.cd[n-1]) {
		w.cd = append(w.cd, make([]byte, 0, max(64<<10, len(b))))
	}
	w.cd[len(w.cd)-1] = append(w.cd[len(w.cd)-1], b...)
	w.entries++
}

// finish ends the file being written: its data descriptor and its record.
func (w *Writer) finish() error {
	f := w.file
	if f == nil {
		return nil
	}
	w.file = nil
	if err := f.deflate.Close(); err != nil {
		return err
	}
	e := f.e
	e.crc, e.compressed, e.size = f.crc.Sum32(), uint64(f.compressed.n), uint64(f.size)
	b := le32(w.rec[:0], 0x08074b50)
	b = le32(b, e.crc)
	if e.compressed >= u32max || e.size >= u32max {
		b = le64(b, e.compressed)
		b = le64(b, e.size)
	} else {
		b = le32(b, uint32(e.compressed))
		b = le32(b, uint32(e.size))
	}
	w.rec = b
	if _, err := w.out.Write(b); err != nil {
		return err
	}
	w.record(e)
	return nil
}

// deflater compresses the content of a file: flate's Writer, reset for each file. An
// interface so that the zip64 test can count 4 GiB through the Writer without deflating them
// (minutes under -race; the deflate output itself is pinned by TestWriterMatchesArchiveZip).
type deflater interface {
	io.WriteCloser
	Reset(io.Writer)
}

// fileWriter compresses the content of one file.
type fileWriter struct {
	e          *entry
	deflate    deflater
	compressed *counter
	crc        hash.Hash32
	size       int64
	buf        []byte // the Writer's copy buffer
}

func (f *fileWriter) Write(p []byte) (int, error) {
	f.crc.Write(p)
	f.size += int64(len(p))
	return f.deflate.Write(p)
}

// ReadFrom copies r into the entry through the Writer's buffer. Why: io.Copy would allocate
// 32 KiB for every file (an os.File's WriteTo falls back to it), 640 MiB of garbage for a
// folder of 20,000 files.
func (f *fileWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.CopyBuffer(struct{ io.Writer }{f}, struct{ io.Reader }{r}, f.buf)
}

// external is the external attributes of an entry of Unix type typ: the Unix mode, and
// MS-DOS's read-only bit when perm has no owner write (archive/zip's SetMode).
func external(typ uint32, perm fs.FileMode) uint32 {
	a := (typ | uint32(perm.Perm())) << 16
	if perm&0o200 == 0 {
		a |= msdosReadOnly
	}
	return a
}

// utf8Flag is the UTF-8 flag for names a CP-437 reader would misread (archive/zip's rule).
func utf8Flag(name string) uint16 {
	if strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r > 0x7d || r == 0x5c }) {
		return flagUTF8
	}
	return 0
}

// dosTime is t in MS-DOS date and time (zero for the zero time, as archive/zip writes).
func dosTime(t time.Time) (date, tm uint16) {
	if t.IsZero() {
		return 0, 0
	}
	return uint16(t.Day() + int(t.Month())<<5 + (t.Year()-1980)<<9), uint16(t.Second()/2 + t.Minute()<<5 + t.Hour()<<11)
}

// extTime appends the extended timestamp extra of t (none for the zero time).
func extTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	b = le16(b, extTimeID)
	b = le16(b, 5)
	b = append(b, 1) // modification time
	return le32(b, uint32(t.Unix()))
}

func le16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }
func le32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func le64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// counter counts the bytes written through it.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
