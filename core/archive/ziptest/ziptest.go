// Package ziptest builds hostile and ordinary zip archives for the tests of core/archive,
// core and handlers: decompression bombs are generated (streamed, never held in memory),
// not stored in the repository. Test-only: nothing outside *_test.go imports it.
package ziptest

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"io/fs"
	"strconv"
	"time"
)

// Entry is one entry of Build.
type Entry struct {
	Name string
	Body string
	Mode fs.FileMode // 0 = a regular 0644 file (or a 0755 folder for names ending in "/")
	// Flags are added to the header's flags (0x1 marks an encrypted entry).
	Flags uint16
	// Method is the compression method (0 = deflate); one other than deflate is written
	// raw, uncompressed, under that method's number.
	Method uint16
	// Stored writes the body uncompressed (method 0, "store").
	Stored bool
}

// Build writes a zip of entries to w. Names are stored as given: "../x", "/abs", "C:\\x".
func Build(w io.Writer, entries ...Entry) error {
	zw := zip.NewWriter(w)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.Name, Method: zip.Deflate, Modified: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)}
		if e.Method != 0 {
			h.Method = e.Method
		}
		if e.Stored {
			h.Method = zip.Store
		}
		if e.Mode != 0 {
			h.SetMode(e.Mode)
		} else {
			h.SetMode(0o644)
		}
		if e.Flags != 0 || e.Method > zip.Deflate {
			// CreateRaw: the writer cannot compress with an unknown method or encrypt.
			h.Flags |= e.Flags
			h.CRC32 = crc32.ChecksumIEEE([]byte(e.Body))
			h.CompressedSize64, h.UncompressedSize64 = uint64(len(e.Body)), uint64(len(e.Body))
			f, err := zw.CreateRaw(h)
			if err != nil {
				return err
			}
			if _, err := io.WriteString(f, e.Body); err != nil {
				return err
			}
			continue
		}
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(f, e.Body); err != nil {
			return err
		}
	}
	return zw.Close()
}

// Zeros writes a raw deflate stream that expands to 1 + 258*runs zero bytes: one literal
// zero, then runs copies of (length 258, distance 1) in one fixed-Huffman block, 13 bits
// each (a ratio of about 159). It returns the bytes written.
func Zeros(w io.Writer, runs int64) (int64, error) {
	bw := &bitWriter{w: bufio.NewWriterSize(w, 1<<16)}
	bw.bits(1, 1)    // BFINAL
	bw.bits(1, 2)    // BTYPE 01: fixed Huffman
	bw.code(0x30, 8) // literal 0
	run := func() {
		bw.code(0xc5, 8) // length symbol 285: 258, no extra bits
		bw.code(0, 5)    // distance code 0: 1
	}
	for ; runs > 0 && bw.n != 0; runs-- {
		run()
	}
	// Byte-aligned now: 8 runs are 13 whole bytes, the same 13 every time.
	if blocks := runs / 8; blocks > 0 {
		var pat bytes.Buffer
		pw := &bitWriter{w: bufio.NewWriter(&pat)}
		for range 8 {
			pw.code(0xc5, 8)
			pw.code(0, 5)
		}
		if _, err := pw.flush(); err != nil {
			return 0, err
		}
		chunk := bytes.Repeat(pat.Bytes(), 4096)
		for left := blocks; left > 0; {
			k := min(left, 4096)
			if _, err := bw.w.Write(chunk[:k*13]); err != nil {
				return 0, err
			}
			bw.out += k * 13
			left -= k
		}
		runs -= blocks * 8
	}
	for ; runs > 0; runs-- {
		run()
	}
	bw.code(0, 7) // end of block
	return bw.flush()
}

// ZerosSize is the expanded size of Zeros(runs).
func ZerosSize(runs int64) int64 { return 1 + 258*runs }

// bitWriter packs deflate bits, least significant first.
type bitWriter struct {
	w   *bufio.Writer
	acc uint64
	n   uint
	out int64
	err error
}

func (b *bitWriter) bits(v uint64, n uint) {
	b.acc |= v << b.n
	b.n += n
	for b.n >= 8 {
		if err := b.w.WriteByte(byte(b.acc)); err != nil && b.err == nil {
			b.err = err
		}
		b.out++
		b.acc >>= 8
		b.n -= 8
	}
}

// code writes a Huffman code, whose bits go most significant first.
func (b *bitWriter) code(c uint64, n uint) {
	var r uint64
	for i := range n {
		r |= (c >> i & 1) << (n - 1 - i)
	}
	b.bits(r, n)
}

func (b *bitWriter) flush() (int64, error) {
	if b.n > 0 {
		b.bits(0, 8-b.n)
	}
	if err := b.w.Flush(); err != nil && b.err == nil {
		b.err = err
	}
	return b.out, b.err
}

// Bomb writes a zip whose one entry "zeros.bin" is a Zeros stream of runs, with the header
// claiming declared bytes (ZerosSize(runs) for an honest header, less for a lying one) and
// pad zero bytes of padding after the stream counted as compressed data (a header whose
// ratio looks harmless). The CRC is left 0, as for a stream whose CRC is not checked.
func Bomb(w io.Writer, runs, declared, pad int64) error {
	zw := zip.NewWriter(w)
	cw := &countWriter{}
	if _, err := Zeros(cw, runs); err != nil {
		return err
	}
	h := &zip.FileHeader{Name: "zeros.bin", Method: zip.Deflate, UncompressedSize64: uint64(declared),
		CompressedSize64: uint64(cw.n + pad)}
	h.SetMode(0o644)
	f, err := zw.CreateRaw(h)
	if err != nil {
		return err
	}
	if _, err := Zeros(f, runs); err != nil {
		return err
	}
	if _, err := io.CopyN(f, zeroReader{}, pad); err != nil {
		return err
	}
	return zw.Close()
}

// Longer writes a zip whose one stored entry "long.bin" holds n bytes of zeros while its
// header declares declared bytes (and a compressed size of n, so only reading tells).
func Longer(w io.Writer, n, declared int64) error {
	zw := zip.NewWriter(w)
	h := &zip.FileHeader{Name: "long.bin", Method: zip.Store, UncompressedSize64: uint64(declared), CompressedSize64: uint64(n)}
	h.SetMode(0o644)
	f, err := zw.CreateRaw(h)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, zeroReader{}, n); err != nil {
		return err
	}
	return zw.Close()
}

// Overlapped writes a Fifield-style overlapping-entry bomb: one local file header and one
// kernel (a Zeros stream of runs) that n central-directory entries all point to, so the
// file is about 50 bytes per entry while it expands to n*ZerosSize(runs).
func Overlapped(w io.Writer, n int, runs int64) error {
	cw := &countWriter{}
	if _, err := Zeros(cw, runs); err != nil {
		return err
	}
	size := uint64(ZerosSize(runs))
	bw := bufio.NewWriter(w)
	le := binary.LittleEndian
	name := []byte("k")
	// The local file header (signature, version, flags, method 8, time, date, crc, sizes, name).
	hdr := make([]byte, 30)
	le.PutUint32(hdr[0:], 0x04034b50)
	le.PutUint16(hdr[4:], 20)
	le.PutUint16(hdr[8:], 8)
	le.PutUint32(hdr[18:], uint32(cw.n))
	le.PutUint32(hdr[22:], uint32(size))
	le.PutUint16(hdr[26:], uint16(len(name)))
	bw.Write(hdr)
	bw.Write(name)
	if _, err := Zeros(bw, runs); err != nil {
		return err
	}
	cdStart := 30 + int64(len(name)) + cw.n
	var cdSize int64
	for i := range n {
		cname := []byte("f" + strconv.Itoa(i))
		cd := make([]byte, 46)
		le.PutUint32(cd[0:], 0x02014b50)
		le.PutUint16(cd[4:], 20)
		le.PutUint16(cd[6:], 20)
		le.PutUint16(cd[10:], 8)
		le.PutUint32(cd[20:], uint32(cw.n))
		le.PutUint32(cd[24:], uint32(size))
		le.PutUint16(cd[28:], uint16(len(cname)))
		// relative offset of the local header: 0 for every entry
		bw.Write(cd)
		bw.Write(cname)
		cdSize += 46 + int64(len(cname))
	}
	end := make([]byte, 22)
	le.PutUint32(end[0:], 0x06054b50)
	le.PutUint16(end[8:], uint16(min(n, 0xffff)))
	le.PutUint16(end[10:], uint16(min(n, 0xffff)))
	le.PutUint32(end[12:], uint32(cdSize))
	le.PutUint32(end[16:], uint32(cdStart))
	bw.Write(end)
	return bw.Flush()
}

// Many writes a zip of n empty stored files named e0, e1, ...
func Many(w io.Writer, n int) error {
	zw := zip.NewWriter(w)
	for i := range n {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: "e" + strconv.Itoa(i), Method: zip.Store}); err != nil {
			return err
		}
	}
	return zw.Close()
}

// Noise is n bytes of text that deflate cannot shrink much (xorshift letters).
func Noise(n int) string {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = 'a' + byte(x%26)
	}
	return string(b)
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
