package crypt

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// testKey returns a fresh data key.
func testKey(t testing.TB) *Key {
	t.Helper()
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return &k
}

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 17))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// seal writes plain through NewWriter in chunks of the given sizes (cycled).
func seal(t testing.TB, key *Key, plain []byte, chunks ...int) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) == 0 {
		chunks = []int{len(plain) + 1}
	}
	for i, rest := 0, plain; len(rest) > 0; i++ {
		c := min(chunks[i%len(chunks)], len(rest))
		if n, err := w.Write(rest[:c]); err != nil || n != c {
			t.Fatalf("write %d bytes: %d, %v", c, n, err)
		}
		rest = rest[c:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// sealByCopy writes 7 bytes, then the rest through io.Copy (the writer's ReadFrom) from a
// source that returns odd-sized reads.
func sealByCopy(t testing.TB, key *Key, plain []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, key)
	if err != nil {
		t.Fatal(err)
	}
	head := min(7, len(plain))
	if _, err := w.Write(plain[:head]); err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(w, iotest.HalfReader(bytes.NewReader(plain[head:]))); err != nil || n != int64(len(plain)-head) {
		t.Fatalf("io.Copy into the writer: %d, %v", n, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// open reads sealed with read and fails the test on any error.
func open(t testing.TB, key *Key, sealed []byte, read func(io.Reader) ([]byte, error)) []byte {
	t.Helper()
	r, err := NewReader(bytes.NewReader(sealed), key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := read(r)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// copyOut reads r with io.Copy (the reader's WriteTo).
func copyOut(r io.Reader) ([]byte, error) {
	var out bytes.Buffer
	_, err := io.Copy(&out, r)
	return out.Bytes(), err
}

// drain reads r to the end in odd-sized reads and returns what it gave before the error.
func drain(r io.Reader) ([]byte, error) {
	var got []byte
	buf := make([]byte, 9973)
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
	}
}

func TestSizesAreExactInverses(t *testing.T) {
	for _, p := range []int64{0, 1, SegmentSize - 1, SegmentSize, SegmentSize + 1, 10<<20 + 3, 1 << 40} {
		c := CipherSize(p)
		if got, err := PlainSize(c); err != nil || got != p {
			t.Errorf("PlainSize(CipherSize(%d)=%d) = %d, %v", p, c, got, err)
		}
	}
	// Every cipher size over three segments either maps back exactly or is ErrFormat.
	possible := 0
	for c := int64(-1); c < HeaderSize+3*sealedSize+2*tagSize; c++ {
		p, err := PlainSize(c)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("PlainSize(%d): %v is not ErrFormat", c, err)
			}
			continue
		}
		possible++
		if CipherSize(p) != c {
			t.Fatalf("CipherSize(PlainSize(%d)=%d) = %d", c, p, CipherSize(p))
		}
	}
	// The range holds the cipher sizes of plaintexts 0..3 segments and of 1..15 bytes more.
	if want := 3*SegmentSize + 1 + 15; possible != want {
		t.Errorf("%d possible cipher sizes, want %d", possible, want)
	}
	for _, c := range []int64{0, HeaderSize, HeaderSize + tagSize - 1,
		HeaderSize + sealedSize + 1, HeaderSize + sealedSize + tagSize} {
		if _, err := PlainSize(c); !errors.Is(err, ErrFormat) {
			t.Errorf("PlainSize(%d) = %v, want ErrFormat", c, err)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	key := testKey(t)
	for _, size := range []int{0, 1, SegmentSize - 1, SegmentSize, SegmentSize + 1, 10<<20 + 3} {
		plain := randomBytes(size, uint64(size))
		sealed := seal(t, key, plain, 7, 4093, SegmentSize+5, 1, 3*SegmentSize)
		if int64(len(sealed)) != CipherSize(int64(size)) {
			t.Fatalf("size %d: sealed %d bytes, CipherSize says %d", size, len(sealed), CipherSize(int64(size)))
		}
		if !IsSealed(sealed) || !Check(bytes.NewReader(sealed), int64(len(sealed)), key) {
			t.Fatalf("size %d: IsSealed/Check false on a sealed file", size)
		}
		if copied := sealByCopy(t, key, plain); !bytes.Equal(open(t, key, copied, copyOut), plain) {
			t.Fatalf("size %d: sealed by io.Copy (ReadFrom), the plaintext differs", size)
		}
		if !bytes.Equal(open(t, key, sealed, drain), plain) || !bytes.Equal(open(t, key, sealed, copyOut), plain) {
			t.Fatalf("size %d: Reader (Read or WriteTo) gave other bytes than the plaintext", size)
		}
		ra, err := NewReaderAt(bytes.NewReader(sealed), int64(len(sealed)), key)
		if err != nil {
			t.Fatal(err)
		}
		if ra.Size() != int64(size) {
			t.Fatalf("Size() = %d, want %d", ra.Size(), size)
		}
		checkRandomReads(t, ra, plain, uint64(size))
	}
}

// checkRandomReads compares ReadAt at random offsets and lengths (some past the end) with plain.
func checkRandomReads(t *testing.T, ra *ReaderAt, plain []byte, seed uint64) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(seed, 3))
	for range 60 {
		off := rnd.Int64N(int64(len(plain)) + 2)
		p := make([]byte, rnd.IntN(3*SegmentSize))
		n, err := ra.ReadAt(p, off)
		end := min(off+int64(len(p)), int64(len(plain)))
		want := plain[min(off, end):end]
		if n != len(want) || !bytes.Equal(p[:n], want) {
			t.Fatalf("ReadAt(%d bytes, %d): %d bytes differ from the plaintext (want %d)", len(p), off, n, len(want))
		}
		if n < len(p) && !errors.Is(err, io.EOF) || n == len(p) && err != nil {
			t.Fatalf("ReadAt(%d bytes, %d) = %d, %v", len(p), off, n, err)
		}
	}
	if _, err := ra.ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("ReadAt at a negative offset succeeded")
	}
}

func TestWriteAfterClose(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, testKey(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	n := out.Len()
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Close succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("second Close succeeded")
	}
	if out.Len() != n || n != int(CipherSize(0)) {
		t.Errorf("wrote %d bytes after Close (empty file is %d)", out.Len()-n, CipherSize(0))
	}
}

var errDiskFull = errors.New("disk full")

// failingWriter accepts limit bytes, then fails.
type failingWriter struct{ limit int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		return 0, errDiskFull
	}
	f.limit -= len(p)
	return len(p), nil
}

func TestWriterFailureIsSticky(t *testing.T) {
	key := testKey(t)
	if _, err := NewWriter(&failingWriter{limit: 10}, key); err == nil {
		t.Fatal("NewWriter succeeded though the header could not be written")
	}
	w, err := NewWriter(&failingWriter{limit: HeaderSize}, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, SegmentSize+1)); err == nil {
		t.Fatal("Write succeeded though the segment could not be written")
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after a failed write succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failed write succeeded")
	}

	// The same through io.Copy (ReadFrom): a failing destination, then a failing source.
	w, err = NewWriter(&failingWriter{limit: HeaderSize}, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, bytes.NewReader(make([]byte, 2*SegmentSize))); err == nil {
		t.Fatal("io.Copy succeeded though the segment could not be written")
	}
	if _, err := io.Copy(w, bytes.NewReader([]byte("x"))); err == nil {
		t.Error("io.Copy after a failed write succeeded")
	}
	w, err = NewWriter(io.Discard, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, iotest.ErrReader(errors.New("source broke"))); err == nil || err.Error() != "source broke" {
		t.Errorf("io.Copy from a failing source: %v", err)
	}
}

func TestWriteToShortWriter(t *testing.T) {
	key := testKey(t)
	r, err := NewReader(bytes.NewReader(seal(t, key, make([]byte, 100))), key)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.(io.WriterTo).WriteTo(&failingWriter{limit: 10}); !errors.Is(err, errDiskFull) || n != 0 {
		t.Errorf("WriteTo into a failing writer: %d, %v", n, err)
	}
}

func TestIsSealed(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{{"FSHDENC\x00", true}, {"FSHDENC\x00rest", true}, {"FSHDENC", false}, {"", false}, {"FSHDENC\x01", false}, {"PK\x03\x04zipzip", false}} {
		if got := IsSealed([]byte(c.in)); got != c.want {
			t.Errorf("IsSealed(%q) = %v", c.in, got)
		}
	}
}
