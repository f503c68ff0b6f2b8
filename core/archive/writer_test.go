package archive

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// item is one entry written by both writers.
type item struct {
	name string
	dir  bool
	perm fs.FileMode
	mod  time.Time
	body string
}

// writeBoth writes items with Writer and with archive/zip (deflate at Level, the same
// header fields).
func writeBoth(t *testing.T, items []item) (mine, std []byte) {
	var a, b bytes.Buffer
	w := NewWriter(&a)
	z := zip.NewWriter(&b)
	z.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) { return flate.NewWriter(out, Level) })
	for _, it := range items {
		h := &zip.FileHeader{Name: it.name, Method: zip.Deflate, Modified: it.mod}
		if it.dir {
			h.SetMode(fs.ModeDir | it.perm)
			if err := w.Dir(it.name, it.mod, it.perm); err != nil {
				t.Fatal(err)
			}
			if _, err := z.CreateHeader(h); err != nil {
				t.Fatal(err)
			}
			continue
		}
		h.SetMode(it.perm)
		f, err := w.File(it.name, it.mod, it.perm)
		if err != nil {
			t.Fatal(err)
		}
		g, err := z.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(f, it.body)
		_, _ = io.WriteString(g, it.body)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return a.Bytes(), b.Bytes()
}

// TestWriterMatchesArchiveZip: Writer writes byte for byte what archive/zip writes for the
// same entries (names that need the UTF-8 flag, folders, empty files, modes, times, no
// time), and zip64 end records once there are 65,535 entries or more; archive/zip and the
// unzip command read both.
func TestWriterMatchesArchiveZip(t *testing.T) {
	t.Parallel()
	mod := time.Date(2026, 11, 27, 13, 14, 15, 0, time.UTC)
	items := []item{
		{name: "a.txt", perm: 0o644, mod: mod, body: "alpha"},
		{name: "dir/", dir: true, perm: 0o755},
		{name: "dir/é 日本 😀.txt", perm: 0o600, mod: mod, body: strings.Repeat("text ", 20000)},
		{name: "dir/empty", perm: 0o755, mod: mod},
		{name: "back\\slash~", perm: 0o444, mod: mod, body: "x"},
		{name: "old/", dir: true, perm: 0o700, mod: mod},
	}
	mine, std := writeBoth(t, items)
	if !bytes.Equal(mine, std) {
		t.Fatalf("archives differ: %d bytes, archive/zip %d", len(mine), len(std))
	}
	many := make([]item, 70000) // folders: no compressor per entry in archive/zip
	for i := range many {
		many[i] = item{name: "d" + strconv.Itoa(i) + "/", dir: true, perm: 0o755, mod: mod}
	}
	many[0] = item{name: "f", perm: 0o644, mod: mod, body: "file among folders"}
	mine, std = writeBoth(t, many)
	if !bytes.Equal(mine, std) {
		t.Fatalf("70,000 entries: archives differ: %d bytes, archive/zip %d", len(mine), len(std))
	}
	r, err := zip.NewReader(bytes.NewReader(mine), int64(len(mine)))
	if err != nil || len(r.File) != len(many) {
		t.Fatalf("reading back: %v", err)
	}
	if _, err := exec.LookPath("unzip"); err == nil {
		p := filepath.Join(t.TempDir(), "many.zip")
		if err := os.WriteFile(p, mine, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("unzip", "-tqq", p).CombinedOutput(); err != nil {
			t.Fatalf("unzip -t: %v %s", err, out)
		}
	}
}

// TestWriterZip64Sizes: a file of 4 GiB or more gets zip64 sizes (data descriptor,
// central record and version), byte for byte as archive/zip writes them. Both compress
// through the same counting compressor, not flate: what is proven is the records around the
// data, and 4 GiB through flate twice took 4 minutes under -race (issue 34).
func TestWriterZip64Sizes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("counts 4 GiB twice")
	}
	var a, b bytes.Buffer
	w := NewWriter(&a)
	w.deflate = &countingDeflater{}
	z := zip.NewWriter(&b)
	z.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		d := &countingDeflater{}
		d.Reset(out)
		return d, nil
	})
	f, err := w.File("big", time.Time{}, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	h := &zip.FileHeader{Name: "big", Method: zip.Deflate}
	h.SetMode(0o644)
	g, err := z.CreateHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, 1<<20)
	for range 4096 + 1 {
		_, _ = f.Write(zero)
		_, _ = g.Write(zero)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("archives differ: %d bytes, archive/zip %d", a.Len(), b.Len())
	}
	r, err := zip.NewReader(bytes.NewReader(a.Bytes()), int64(a.Len()))
	if err != nil || r.File[0].UncompressedSize64 != 4097<<20 {
		t.Fatalf("reading back: %v", err)
	}
}

// countingDeflater stands for flate in TestWriterZip64Sizes: it writes the count of bytes
// it received (8 bytes) when closed, so both archives carry the same small "compressed" data.
type countingDeflater struct {
	out io.Writer
	n   uint64
}

func (d *countingDeflater) Reset(out io.Writer)         { d.out, d.n = out, 0 }
func (d *countingDeflater) Write(p []byte) (int, error) { d.n += uint64(len(p)); return len(p), nil }
func (d *countingDeflater) Close() error {
	_, err := d.out.Write(binary.LittleEndian.AppendUint64(nil, d.n))
	return err
}
