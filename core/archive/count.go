package archive

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
)

// Record signatures and sizes of the zip format (APPNOTE 4.3).
const (
	eocdLen        = 22
	eocd64LocLen   = 20
	cdHeaderLen    = 46
	maxCommentLen  = 0xffff
	eocdSig        = "PK\x05\x06"
	eocd64LocSig   = "PK\x06\x07"
	eocd64Sig      = "PK\x06\x06"
	cdHeaderSig    = "PK\x01\x02"
	zip64Sentinel  = 0xffffffff
	eocd64FieldLen = 56
)

// countEntries walks the central directory's headers (one sequential read, nothing kept)
// and refuses an archive with more than max entries before archive/zip parses it: the
// parser keeps a few hundred bytes per entry, so a file of millions of tiny headers would
// cost gigabytes. The count field of the end record is not trusted (the parser checks it
// only modulo 65536). Anything unreadable here is left to the parser to refuse.
func countEntries(r io.ReaderAt, size int64, max int) error {
	off, n, ok := centralDirectory(r, size)
	if !ok {
		return nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, off, n), 64<<10)
	hdr := make([]byte, cdHeaderLen)
	le := binary.LittleEndian
	for count := 0; ; count++ {
		if count > max {
			return &LimitError{Limit: "entries", Value: int64(count), Max: int64(max)}
		}
		if _, err := io.ReadFull(br, hdr); err != nil || string(hdr[:4]) != cdHeaderSig {
			return nil
		}
		skip := int64(le.Uint16(hdr[28:])) + int64(le.Uint16(hdr[30:])) + int64(le.Uint16(hdr[32:]))
		if _, err := br.Discard(int(skip)); err != nil {
			return nil
		}
	}
}

// centralDirectory finds the offset and size of the central directory from the end
// record (and its zip64 form when the fields say so).
func centralDirectory(r io.ReaderAt, size int64) (off, n int64, ok bool) {
	tail := min(size, eocdLen+maxCommentLen)
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return 0, 0, false
	}
	i := bytes.LastIndex(buf, []byte(eocdSig))
	if i < 0 || len(buf)-i < eocdLen {
		return 0, 0, false
	}
	le := binary.LittleEndian
	end := buf[i:]
	n, off = int64(le.Uint32(end[12:])), int64(le.Uint32(end[16:]))
	if n == zip64Sentinel || off == zip64Sentinel {
		if i < eocd64LocLen || string(buf[i-eocd64LocLen:i-eocd64LocLen+4]) != eocd64LocSig {
			return 0, 0, false
		}
		at := int64(le.Uint64(buf[i-eocd64LocLen+8:]))
		rec := make([]byte, eocd64FieldLen)
		if at < 0 || at > size-eocd64FieldLen {
			return 0, 0, false
		}
		if _, err := r.ReadAt(rec, at); err != nil || string(rec[:4]) != eocd64Sig {
			return 0, 0, false
		}
		n, off = int64(le.Uint64(rec[40:])), int64(le.Uint64(rec[48:]))
	}
	if off < 0 || n < 0 || off > size || n > size-off {
		return 0, 0, false
	}
	return off, n, true
}
