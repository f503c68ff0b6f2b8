package crypt

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// seal encrypts plain under key, writing in chunks of step bytes.
func seal(t *testing.T, key *Key, plain []byte, step int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, key)
	if err != nil {
		t.Fatal(err)
	}
	for rest := plain; len(rest) > 0; {
		n := min(step, len(rest))
		if _, err := w.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// openAll decrypts sealed both ways (stream and random access) and returns the stream's
// plaintext and the first error of either.
func openAll(sealed []byte, key *Key) ([]byte, error) {
	r, err := NewReader(bytes.NewReader(sealed), key)
	if err != nil {
		return nil, err
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	ra, err := NewReaderAt(bytes.NewReader(sealed), int64(len(sealed)), key)
	if err != nil {
		return nil, err
	}
	got := make([]byte, ra.Size())
	if _, err := ra.ReadAt(got, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if !bytes.Equal(got, plain) {
		return nil, errors.New("ReaderAt and Reader disagree")
	}
	return plain, nil
}

func mustKey(t *testing.T) Key {
	t.Helper()
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestRoundTripSizes: every size around the segment boundaries round-trips, in any write
// chunking, and the sealed size is CipherSize (whose inverse is PlainSize).
func TestRoundTripSizes(t *testing.T) {
	key := mustKey(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 15, 16, 17, SegmentSize - 1, SegmentSize, SegmentSize + 1, 2*SegmentSize - 1, 2 * SegmentSize, 3*SegmentSize + 7} {
		plain := make([]byte, size)
		for i := range plain {
			plain[i] = byte(rng.Uint32())
		}
		for _, step := range []int{1 << 20, 4096, 1000} {
			sealed := seal(t, &key, plain, step)
			if int64(len(sealed)) != CipherSize(int64(size)) {
				t.Fatalf("size %d: sealed %d bytes, CipherSize says %d", size, len(sealed), CipherSize(int64(size)))
			}
			if p, err := PlainSize(int64(len(sealed))); err != nil || p != int64(size) {
				t.Fatalf("size %d: PlainSize %d, %v", size, p, err)
			}
			got, err := openAll(sealed, &key)
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("size %d step %d: %v", size, step, err)
			}
		}
	}
}

// TestTamperingDetected: a flipped bit anywhere, a truncation at any segment boundary or
// inside a segment, an appended or dropped segment, reordered segments, another key and
// another header all fail with ErrAuth or ErrFormat, never with wrong plaintext.
func TestTamperingDetected(t *testing.T) {
	key, other := mustKey(t), mustKey(t)
	plain := bytes.Repeat([]byte("0123456789abcdef"), (3*SegmentSize+100)/16)
	sealed := seal(t, &key, plain, 1<<20)
	seg := func(i int) int { return HeaderSize + i*sealedSize }
	cases := map[string][]byte{
		"flip in header salt": flip(sealed, saltOffset+3),
		"flip in segment 0":   flip(sealed, seg(0)+5),
		"flip in segment 2":   flip(sealed, seg(2)+sealedSize-1),
		"flip in final":       flip(sealed, len(sealed)-1),
		"cut at boundary 3":   sealed[:seg(3)],
		"cut at boundary 1":   sealed[:seg(1)],
		"cut mid-segment":     sealed[:seg(1)+1000],
		"cut in a tag":        sealed[:seg(1)+10],
		"cut in the header":   sealed[:HeaderSize-1],
		"segment appended":    append(bytes.Clone(sealed), sealed[seg(0):seg(1)]...),
		"middle dropped":      append(bytes.Clone(sealed[:seg(1)]), sealed[seg(2):]...),
		"two swapped":         swap(sealed, seg(0), seg(1), sealedSize),
		"version changed":     set(sealed, len(magic), version+1),
		"reserved set":        set(sealed, len(magic)+2, 1),
	}
	for name, bad := range cases {
		got, err := openAll(bad, &key)
		if err == nil || !(errors.Is(err, ErrAuth) || errors.Is(err, ErrFormat)) {
			t.Errorf("%s: want ErrAuth or ErrFormat, got %v (%d bytes)", name, err, len(got))
		}
	}
	if _, err := openAll(sealed, &other); !errors.Is(err, ErrAuth) {
		t.Errorf("another key: %v", err)
	}
	if Check(bytes.NewReader(sealed), int64(len(sealed)), &other) || !Check(bytes.NewReader(sealed), int64(len(sealed)), &key) {
		t.Error("Check does not tell the key")
	}
}

// TestReaderAtRandomAccess: reads at any offset and length across segments give the
// plaintext, and a damaged segment fails only the reads that touch it.
func TestReaderAtRandomAccess(t *testing.T) {
	key := mustKey(t)
	plain := make([]byte, 3*SegmentSize+500)
	for i := range plain {
		plain[i] = byte(i * 7)
	}
	sealed := seal(t, &key, plain, 1<<20)
	ra, err := NewReaderAt(bytes.NewReader(sealed), int64(len(sealed)), &key)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		off := rng.IntN(len(plain))
		n := rng.IntN(2 * SegmentSize)
		p := make([]byte, n)
		got, err := ra.ReadAt(p, int64(off))
		want := min(n, len(plain)-off)
		if got != want || !bytes.Equal(p[:got], plain[off:off+got]) || (got < n && !errors.Is(err, io.EOF)) {
			t.Fatalf("ReadAt(%d, %d): %d bytes, %v", n, off, got, err)
		}
	}
	bad := flip(sealed, HeaderSize+sealedSize+100) // segment 1
	ra, err = NewReaderAt(bytes.NewReader(bad), int64(len(bad)), &key)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 100)
	if _, err := ra.ReadAt(p, 10); err != nil || !bytes.Equal(p, plain[10:110]) {
		t.Fatalf("segment 0 of a file damaged in segment 1: %v", err)
	}
	if n, err := ra.ReadAt(p, SegmentSize+10); !errors.Is(err, ErrAuth) || bytes.Contains(p[:n], plain[SegmentSize+10:SegmentSize+20]) {
		t.Fatalf("the damaged segment: %d bytes, %v", n, err)
	}
}

// TestWrapUnwrap: a wrapped key unwraps with the same KEK and user only.
func TestWrapUnwrap(t *testing.T) {
	dek := mustKey(t)
	salt := []byte("0123456789abcdef0123456789abcdef")
	kek := DeriveKEK([]byte("master key one, long enough....."), "alice", salt)
	w, err := Wrap(&kek, &dek, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Unwrap(&kek, w, "alice"); err != nil || got != dek {
		t.Fatalf("unwrap: %v", err)
	}
	if _, err := Unwrap(&kek, w, "bob"); err == nil {
		t.Error("unwrapped as another user")
	}
	wrong := DeriveKEK([]byte("master key two, long enough....."), "alice", salt)
	if _, err := Unwrap(&wrong, w, "alice"); err == nil {
		t.Error("unwrapped with another master key")
	}
	if other := DeriveKEK([]byte("master key one, long enough....."), "bob", salt); other == kek {
		t.Error("the KEK does not depend on the user")
	}
}

func flip(b []byte, i int) []byte { c := bytes.Clone(b); c[i] ^= 0x10; return c }

func set(b []byte, i int, v byte) []byte { c := bytes.Clone(b); c[i] = v; return c }

func swap(b []byte, i, j, n int) []byte {
	c := bytes.Clone(b)
	copy(c[i:i+n], b[j:j+n])
	copy(c[j:j+n], b[i:i+n])
	return c
}
