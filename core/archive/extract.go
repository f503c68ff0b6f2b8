package archive

import (
	"archive/zip"
	"compress/flate"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"path"
	"sync/atomic"
)

// Dest is where Extract writes: a staging folder, with paths relative to it. Create makes
// a new file (never an existing one) with mode 0600, or 0700 when exec.
type Dest interface {
	MkdirAll(dir string) error
	Create(name string, exec bool) (io.WriteCloser, error)
}

// Stats is what Extract wrote.
type Stats struct {
	Files, Dirs int
	Bytes       int64
}

// countingReaderAt counts the compressed bytes read, so ratios are measured on what the
// decompressor really consumed.
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// Extract writes the entries Open accepted into d, in archive order: folders, then each
// file streamed through the limits. Every limit is checked on the bytes as they are
// decompressed: an entry may not exceed its declared size (nor max_file), the total may not
// exceed the declared total (nor MaxTotalBytes), and past RatioFloor neither an entry nor
// the archive may expand more than MaxRatio times what was read. On error the caller
// discards d; what was written is in Stats.
func (a *Archive) Extract(ctx context.Context, d Dest) (Stats, error) {
	var st Stats
	buf := make([]byte, 64<<10)
	budget := min(a.Declared, a.lim.MaxTotalBytes)
	start := a.src.n.Load()
	for i := range a.Entries {
		e := &a.Entries[i]
		if e.Path == "" || e.Skip != "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if e.Dir {
			if err := d.MkdirAll(e.Path); err != nil {
				return st, err
			}
			st.Dirs++
			continue
		}
		if dir := path.Dir(e.Path); dir != "." {
			if err := d.MkdirAll(dir); err != nil {
				return st, err
			}
		}
		w, err := d.Create(e.Path, e.Exec)
		if err != nil {
			return st, err
		}
		err = a.copyEntry(ctx, w, e, buf, &st.Bytes, budget, start)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return st, err
		}
		st.Files++
	}
	return st, nil
}

// copyEntry decompresses e into w, checking every limit chunk by chunk. total is the
// running count of the archive's bytes; start is the compressed count when Extract began.
func (a *Archive) copyEntry(ctx context.Context, w io.Writer, e *Entry, buf []byte, total *int64, budget, start int64) error {
	raw, err := e.f.OpenRaw()
	if err != nil {
		return &FormatError{Entry: e.Name, Reason: "the entry cannot be read (corrupt archive)"}
	}
	consumedAt := a.src.n.Load()
	var rd io.Reader = raw
	if e.f.Method == zip.Deflate {
		fr := flate.NewReader(raw)
		defer fr.Close()
		rd = fr
	}
	h := crc32.NewIEEE()
	declared := int64(min(e.Size, 1<<62))
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		k, rerr := rd.Read(buf)
		if k > 0 {
			n += int64(k)
			*total += int64(k)
			if err := a.judge(e, n, declared, *total, budget, a.src.n.Load()-consumedAt, a.src.n.Load()-start); err != nil {
				return err
			}
			h.Write(buf[:k])
			if _, err := w.Write(buf[:k]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if errors.Is(rerr, io.ErrUnexpectedEOF) || errors.As(rerr, new(flate.CorruptInputError)) {
				return &FormatError{Entry: e.Name, Reason: "the entry's compressed data is truncated or corrupt"}
			}
			return rerr
		}
	}
	if n != declared {
		return &FormatError{Entry: e.Name, Reason: "the entry is shorter than its header declares (truncated or corrupt archive)"}
	}
	if e.f.CRC32 != 0 && h.Sum32() != e.f.CRC32 {
		return &FormatError{Entry: e.Name, Reason: "the entry's checksum does not match (corrupt archive)"}
	}
	return nil
}

// judge checks the limits after an entry reached n bytes (the archive total bytes),
// having consumed entryIn compressed bytes for this entry and allIn for the archive.
func (a *Archive) judge(e *Entry, n, declared, total, budget, entryIn, allIn int64) error {
	switch {
	case n > declared:
		return &LimitError{Limit: "size_mismatch", Entry: e.Name, Value: n, Max: declared}
	case total > budget:
		return &LimitError{Limit: "total_bytes", Value: total, Max: budget}
	case n > RatioFloor && n > a.lim.MaxRatio*max(entryIn, 1):
		return &LimitError{Limit: "ratio", Entry: e.Name, Value: n / max(entryIn, 1), Max: a.lim.MaxRatio}
	case total > RatioFloor && total > a.lim.MaxRatio*max(allIn, 1):
		return &LimitError{Limit: "overall_ratio", Value: total / max(allIn, 1), Max: a.lim.MaxRatio}
	}
	return nil
}
