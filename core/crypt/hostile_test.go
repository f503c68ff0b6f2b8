package crypt

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/iotest"
)

// segStart returns the cipher offset of segment i.
func segStart(i int) int { return HeaderSize + i*sealedSize }

// expectRejected opens data with both readers and asserts the error is one of want, that the
// stream reader returned only whole authenticated segments (a prefix of plain ending on a
// segment boundary, at most maxGood segments), and that ReaderAt either refuses to open or
// fails on a segment at or after maxGood with nothing of it returned.
func expectRejected(t *testing.T, key *Key, data, plain []byte, maxGood int, want ...error) {
	t.Helper()
	is := func(err error) bool {
		for _, w := range want {
			if errors.Is(err, w) {
				return true
			}
		}
		return false
	}
	for mode, read := range map[string]func(io.Reader) ([]byte, error){"Read": drain, "WriteTo": copyOut} {
		var got []byte
		r, err := NewReader(bytes.NewReader(data), key)
		if err == nil {
			got, err = read(r)
		}
		if !is(err) {
			t.Fatalf("Reader (%s): error %v, want %v", mode, err, want)
		}
		if !bytes.HasPrefix(plain, got) || len(got)%SegmentSize != 0 || len(got) > maxGood*SegmentSize {
			t.Fatalf("Reader (%s) returned %d bytes before the error: not whole authenticated segments (at most %d)", mode, len(got), maxGood)
		}
	}
	ra, err := NewReaderAt(bytes.NewReader(data), int64(len(data)), key)
	if err == nil {
		p := make([]byte, len(plain))
		var n int
		n, err = ra.ReadAt(p, 0)
		if !bytes.HasPrefix(plain, p[:n]) || n%SegmentSize != 0 || n > maxGood*SegmentSize {
			t.Fatalf("ReaderAt returned %d bytes before the error (at most %d whole segments)", n, maxGood)
		}
	}
	if !is(err) {
		t.Fatalf("ReaderAt: error %v, want %v", err, want)
	}
}

func TestFlippedBitIsRejected(t *testing.T) {
	key := testKey(t)
	plain := randomBytes(3*SegmentSize+1000, 1) // segments 0..2 full, 3 partial and final
	sealed := seal(t, key, plain)
	for _, c := range []struct {
		name    string
		at      int
		maxGood int
		want    error
	}{
		{"magic", 2, 0, ErrFormat},
		{"version", 8, 0, ErrFormat},
		{"reserved", 12, 0, ErrFormat},
		{"salt", 30, 0, ErrAuth},
		{"first segment", segStart(0) + 5, 0, ErrAuth},
		{"middle segment ciphertext", segStart(1) + 1234, 1, ErrAuth},
		{"middle segment tag", segStart(2) - 3, 1, ErrAuth},
		{"final segment ciphertext", segStart(3) + 10, 3, ErrAuth},
		{"final segment tag", len(sealed) - 1, 3, ErrAuth},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := bytes.Clone(sealed)
			bad[c.at] ^= 0x10
			expectRejected(t, key, bad, plain, c.maxGood, c.want)
			if Check(bytes.NewReader(bad), int64(len(bad)), key) && c.maxGood == 0 {
				t.Error("Check accepted a damaged header or first segment")
			}
		})
	}
}

// damaged is a sealed file spoiled on purpose: data, the plaintext it was sealed from, and
// how many leading segments are still intact.
type damaged struct {
	name    string
	plain   []byte
	data    []byte
	maxGood int
}

// expectAllRejected runs expectRejected on each case as a subtest.
func expectAllRejected(t *testing.T, key *Key, cases []damaged, want ...error) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectRejected(t, key, c.data, c.plain, c.maxGood, want...)
		})
	}
}

func TestTruncationIsRejected(t *testing.T) {
	key := testKey(t)
	partial := randomBytes(3*SegmentSize+1000, 2)
	full := randomBytes(3*SegmentSize, 3) // the final segment is full
	sp, sf := seal(t, key, partial), seal(t, key, full)
	expectAllRejected(t, key, []damaged{
		{"empty", partial, nil, 0},
		{"mid magic", partial, sp[:5], 0},
		{"mid header", partial, sp[:20], 0},
		{"after header", partial, sp[:HeaderSize], 0},
		{"mid first segment", partial, sp[:HeaderSize+100], 0},
		{"at a segment boundary", partial, sp[:segStart(2)], 1},
		{"mid middle segment", partial, sp[:segStart(2)+17], 2},
		{"final segment dropped", partial, sp[:segStart(3)], 2},
		{"mid final segment", partial, sp[:len(sp)-1], 3},
		{"full final segment dropped", full, sf[:segStart(2)], 1},
		{"full final segment cut", full, sf[:len(sf)-20], 2},
		// The empty file's one empty final segment is what makes a header alone invalid.
		{"empty file's final segment dropped", nil, seal(t, key, nil)[:HeaderSize], 0},
	}, ErrAuth, ErrFormat)
}

func TestSwappedSegmentsAreRejected(t *testing.T) {
	key := testKey(t)
	plain := randomBytes(4*SegmentSize, 4)
	sealed := seal(t, key, plain)
	swapped := bytes.Clone(sealed)
	copy(swapped[segStart(1):segStart(2)], sealed[segStart(2):segStart(3)])
	copy(swapped[segStart(2):segStart(3)], sealed[segStart(1):segStart(2)])
	halves := randomBytes(2*SegmentSize, 5)
	sh := seal(t, key, halves)
	finalFirst := append(append(bytes.Clone(sh[:HeaderSize]), sh[segStart(1):]...), sh[segStart(0):segStart(1)]...)
	expectAllRejected(t, key, []damaged{
		{"middle segments swapped", plain, swapped, 1},
		{"final segment moved to the front", halves, finalFirst, 0},
	}, ErrAuth)
}

func TestExtendedFileIsRejected(t *testing.T) {
	key := testKey(t)
	partial := randomBytes(2*SegmentSize+100, 6)
	full := randomBytes(2*SegmentSize, 7)
	sp, sf := seal(t, key, partial), seal(t, key, full)
	extend := func(b []byte, more ...byte) []byte { return append(bytes.Clone(b), more...) }
	expectAllRejected(t, key, []damaged{
		{"full final segment duplicated", full, extend(sf, sf[segStart(1):]...), 1},
		{"partial final segment duplicated", partial, extend(sp, sp[segStart(2):]...), 2},
		{"one byte appended", partial, extend(sp, 0), 2},
		{"a tag's worth appended", full, extend(sf, make([]byte, tagSize)...), 1},
		{"a segment appended to the empty file", nil, extend(seal(t, key, nil), sf[segStart(0):segStart(1)]...), 0},
		{"two files concatenated", full, extend(sf, sf...), 1},
	}, ErrAuth, ErrFormat)
}

func TestWrongKeyIsRejected(t *testing.T) {
	key, other := testKey(t), testKey(t)
	for _, size := range []int{0, 10, 2*SegmentSize + 3} {
		plain := randomBytes(size, 8)
		sealed := seal(t, key, plain)
		expectRejected(t, other, sealed, plain, 0, ErrAuth)
		if Check(bytes.NewReader(sealed), int64(len(sealed)), other) {
			t.Errorf("size %d: Check true with another key", size)
		}
	}
}

func TestCheckTellsOursFromLookalikes(t *testing.T) {
	key := testKey(t)
	sealed := seal(t, key, randomBytes(SegmentSize+5, 9))
	// A plaintext file that starts with the magic and the version and has a possible size.
	lookalike := randomBytes(int(CipherSize(300)), 10)
	copy(lookalike, magic+"\x01\x00\x00\x00\x00\x00\x00\x00")
	for _, c := range []struct {
		name string
		data []byte
		size int64
		want bool
	}{
		{"sealed", sealed, int64(len(sealed)), true},
		{"plaintext starting with the magic", lookalike, int64(len(lookalike)), false},
		{"plain text", []byte("hello, world, this is not sealed at all, just text ......."), 59, false},
		{"empty", nil, 0, false},
		{"impossible size", sealed, int64(len(sealed)) - tagSize - 5, false},
		{"size that makes the first segment final", sealed, CipherSize(SegmentSize), false},
	} {
		if got := Check(bytes.NewReader(c.data), c.size, key); got != c.want {
			t.Errorf("%s: Check = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestReaderAtFileShrunkAfterOpen(t *testing.T) {
	key := testKey(t)
	plain := randomBytes(3*SegmentSize, 11)
	sealed := seal(t, key, plain)
	src := &shrinking{data: sealed}
	ra, err := NewReaderAt(src, int64(len(sealed)), key)
	if err != nil {
		t.Fatal(err)
	}
	src.data = sealed[:segStart(1)+100]
	p := make([]byte, len(plain))
	n, err := ra.ReadAt(p, 0)
	if !errors.Is(err, ErrAuth) || n != SegmentSize || !bytes.Equal(p[:n], plain[:n]) {
		t.Fatalf("ReadAt after the file shrank: %d bytes, %v", n, err)
	}
}

// shrinking is an io.ReaderAt over a slice the test may cut.
type shrinking struct{ data []byte }

func (s *shrinking) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(s.data).ReadAt(p, off)
}

func TestConcurrentReadAt(t *testing.T) {
	key := testKey(t)
	plain := randomBytes(5*SegmentSize+321, 12)
	sealed := seal(t, key, plain)
	ra, err := NewReaderAt(bytes.NewReader(sealed), int64(len(sealed)), key)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), 99))
			for range 200 {
				off := rnd.Int64N(int64(len(plain)))
				p := make([]byte, 1+rnd.IntN(SegmentSize+100))
				n, _ := ra.ReadAt(p, off)
				end := min(off+int64(len(p)), int64(len(plain)))
				if n != int(end-off) || !bytes.Equal(p[:n], plain[off:end]) {
					errs <- "concurrent ReadAt returned wrong bytes"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// FuzzOpen feeds arbitrary bytes (seeded with sealed files and damaged ones) to every opener:
// none may panic, and the stream reader, ReaderAt and Check agree on what authenticates.
// (Seeds are sealed with a random salt in each fuzz worker, so the property cannot name them.)
func FuzzOpen(f *testing.F) {
	key := &Key{1, 2, 3}
	for _, size := range []int{0, 1, 100, SegmentSize, SegmentSize + 1} {
		s := seal(f, key, randomBytes(size, uint64(size)))
		f.Add(s)
		f.Add(s[:len(s)-1])
		f.Add(append(bytes.Clone(s), 0))
	}
	f.Add([]byte(magic + "\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var streamed []byte
		r, serr := NewReader(bytes.NewReader(data), key)
		if serr == nil {
			streamed, serr = drain(r)
		}
		var random []byte
		ra, rerr := NewReaderAt(bytes.NewReader(data), int64(len(data)), key)
		if rerr == nil {
			random = make([]byte, ra.Size())
			_, rerr = ra.ReadAt(random, 0)
		}
		if (serr == nil) != (rerr == nil) || serr == nil && !bytes.Equal(streamed, random) {
			t.Fatalf("Reader (%v) and ReaderAt (%v) disagree", serr, rerr)
		}
		if serr == nil && !Check(bytes.NewReader(data), int64(len(data)), key) {
			t.Fatal("Check refused a file both readers accept")
		}
	})
}

// brokenAt is an io.ReaderAt whose reads past limit fail with an I/O error.
type brokenAt struct {
	data  []byte
	limit int64
}

var errDisk = errors.New("input/output error")

func (b brokenAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > b.limit {
		return 0, errDisk
	}
	return bytes.NewReader(b.data).ReadAt(p, off)
}

// TestIOErrorIsNotTampering: a failing disk is reported as itself, not as ErrAuth, so the
// server does not call an unreadable file tampered.
func TestIOErrorIsNotTampering(t *testing.T) {
	key := testKey(t)
	plain := randomBytes(3*SegmentSize, 13)
	sealed := seal(t, key, plain)
	if _, err := NewReader(iotest.ErrReader(errDisk), key); !errors.Is(err, errDisk) || errors.Is(err, ErrAuth) {
		t.Errorf("NewReader on a failing source: %v", err)
	}
	r, err := NewReader(io.MultiReader(bytes.NewReader(sealed[:segStart(1)+10]), iotest.ErrReader(errDisk)), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(r); !errors.Is(err, errDisk) || errors.Is(err, ErrAuth) {
		t.Errorf("Reader on a source failing mid-file: %v", err)
	}
	if _, err := NewReaderAt(brokenAt{sealed, 10}, int64(len(sealed)), key); !errors.Is(err, errDisk) {
		t.Errorf("NewReaderAt on a failing source: %v", err)
	}
	ra, err := NewReaderAt(brokenAt{sealed, int64(len(sealed))}, int64(len(sealed)), key)
	if err != nil {
		t.Fatal(err)
	}
	ra.src = brokenAt{sealed, int64(segStart(1))}
	if n, err := ra.ReadAt(make([]byte, len(plain)), 0); !errors.Is(err, errDisk) || errors.Is(err, ErrAuth) || n != SegmentSize {
		t.Errorf("ReadAt on a source failing mid-file: %d, %v", n, err)
	}
}
