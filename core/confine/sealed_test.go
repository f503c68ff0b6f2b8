package confine_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/crypt"
)

// sealedFs is a fresh sealed Fs and its host directory.
func sealedFs(t *testing.T) (*confine.Fs, string, *crypt.Key) {
	t.Helper()
	dir := t.TempDir()
	f, err := confine.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	k, err := crypt.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	f.Seal(&k)
	return f, dir, &k
}

// TestSealedRoundTrip: what a sealed Fs writes is ciphertext on disk and plaintext through
// it, with plaintext sizes from every stat and listing, and plaintext offsets for
// ReadAt/Seek across segment boundaries.
func TestSealedRoundTrip(t *testing.T) {
	f, dir, _ := sealedFs(t)
	plain := bytes.Repeat([]byte("0123456789abcdef"), 9000) // 144,000 bytes: 3 segments
	if n, err := f.WriteAtomic("d/a.bin", bytes.NewReader(plain), 0o600); err == nil || n != 0 {
		// the parent is missing: WriteAtomic does not create it
		t.Fatalf("write without parent: n=%d err=%v", n, err)
	}
	must(t, f.MkdirAll("d", 0o700))
	n, err := f.WriteAtomic("d/a.bin", bytes.NewReader(plain), 0o600)
	if err != nil || n != int64(len(plain)) {
		t.Fatalf("WriteAtomic = %d, %v", n, err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "d", "a.bin"))
	must(t, err)
	if !crypt.IsSealed(raw) || bytes.Contains(raw, []byte("0123456789abcdef")) || int64(len(raw)) != crypt.CipherSize(int64(len(plain))) {
		t.Fatalf("on disk: %d bytes, sealed=%v", len(raw), crypt.IsSealed(raw))
	}
	for name, stat := range map[string]func() (fs.FileInfo, error){
		"Stat":  func() (fs.FileInfo, error) { return f.Stat("d/a.bin") },
		"Lstat": func() (fs.FileInfo, error) { fi, _, err := f.LstatIfPossible("d/a.bin"); return fi, err },
	} {
		fi, err := stat()
		if err != nil || fi.Size() != int64(len(plain)) {
			t.Fatalf("%s size = %v, %v", name, fi, err)
		}
	}
	d, err := f.Open("d")
	must(t, err)
	infos, err := d.Readdir(-1)
	must(t, err)
	d.Close()
	if len(infos) != 1 || infos[0].Size() != int64(len(plain)) {
		t.Fatalf("Readdir sizes: %v", infos)
	}
	d, _ = f.Open("d")
	entries, err := d.(fs.ReadDirFile).ReadDir(-1)
	must(t, err)
	d.Close()
	if fi, err := entries[0].Info(); err != nil || fi.Size() != int64(len(plain)) {
		t.Fatalf("ReadDir Info size: %v %v", fi, err)
	}

	h, err := f.Open("d/a.bin")
	must(t, err)
	defer h.Close()
	if !confine.IsSealedFile(h) {
		t.Fatal("IsSealedFile = false")
	}
	if fi, err := h.Stat(); err != nil || fi.Size() != int64(len(plain)) {
		t.Fatalf("handle Stat: %v %v", fi, err)
	}
	got, err := io.ReadAll(h)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("ReadAll: %d bytes, %v", len(got), err)
	}
	buf := make([]byte, 100)
	if _, err := h.ReadAt(buf, 65_500); err != nil || !bytes.Equal(buf, plain[65_500:65_600]) {
		t.Fatalf("ReadAt across a segment boundary: %v", err)
	}
	if off, err := h.Seek(-10, io.SeekEnd); err != nil || off != int64(len(plain))-10 {
		t.Fatalf("Seek end: %d %v", off, err)
	}
	tail, _ := io.ReadAll(h)
	if !bytes.Equal(tail, plain[len(plain)-10:]) {
		t.Fatalf("read after seek: %q", tail)
	}
	if _, err := h.Write([]byte("x")); !errors.Is(err, confine.ErrSealedInPlace) {
		t.Fatalf("Write on a read handle: %v", err)
	}
}

// TestSealedWrites: a fresh file opened for writing is sealed, also when synced before it
// is closed; an in-place change (append, read-write) of a sealed file is refused; the raw view
// sees ciphertext; a plaintext file (not migrated) reads as it is.
func TestSealedWrites(t *testing.T) {
	f, dir, k := sealedFs(t)
	w, err := f.OpenFile("new.txt", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	must(t, err)
	_, err = w.Write([]byte("hello sealed world"))
	must(t, err)
	must(t, w.Sync())
	must(t, w.Close())
	raw, _ := os.ReadFile(filepath.Join(dir, "new.txt"))
	plain, err := io.ReadAll(mustReader(t, bytes.NewReader(raw), k))
	if err != nil || string(plain) != "hello sealed world" {
		t.Fatalf("decrypt of what OpenFile wrote: %q %v", plain, err)
	}
	for _, flag := range []int{os.O_WRONLY | os.O_APPEND, os.O_RDWR} {
		if _, err := f.OpenFile("new.txt", flag, 0); !errors.Is(err, confine.ErrSealedInPlace) {
			t.Fatalf("flag %#x on a sealed file: %v", flag, err)
		}
	}
	rh, err := f.Raw().Open("new.txt")
	must(t, err)
	rawRead, _ := io.ReadAll(rh)
	rh.Close()
	if !bytes.Equal(rawRead, raw) {
		t.Fatal("the raw view does not see the bytes on disk")
	}
	must(t, os.WriteFile(filepath.Join(dir, "legacy.txt"), []byte("written before setup"), 0o600))
	lh, err := f.Open("legacy.txt")
	must(t, err)
	got, _ := io.ReadAll(lh)
	lh.Close()
	if string(got) != "written before setup" || confine.IsSealedFile(lh) {
		t.Fatalf("legacy plaintext: %q", got)
	}

	// ReadSealed: decrypts what is sealed, writes plaintext.
	g, err := confine.New(dir)
	must(t, err)
	defer g.Close()
	g.ReadSealed(k)
	if g.Sealed() || !f.Sealed() || !confine.SameSeal(f, g) {
		t.Fatalf("Sealed/SameSeal: f=%v g=%v same=%v", f.Sealed(), g.Sealed(), confine.SameSeal(f, g))
	}
	_, err = g.WriteAtomic("plain.txt", strings.NewReader("plain again"), 0o600)
	must(t, err)
	if b, _ := os.ReadFile(filepath.Join(dir, "plain.txt")); string(b) != "plain again" {
		t.Fatalf("ReadSealed wrote %q", b)
	}
	gh, err := g.Open("new.txt")
	must(t, err)
	got, _ = io.ReadAll(gh)
	gh.Close()
	if string(got) != "hello sealed world" {
		t.Fatalf("ReadSealed read %q", got)
	}
	plainFs, err := confine.New(t.TempDir())
	must(t, err)
	defer plainFs.Close()
	if confine.SameSeal(f, plainFs) {
		t.Fatal("a sealed and a plain Fs have the same seal")
	}
	sub, err := f.Sub("")
	must(t, err)
	defer sub.Close()
	if !sub.Sealed() {
		t.Fatal("Sub lost the seal")
	}
}

// TestSealedTamperedOpen: a sealed file cut short fails at open with the format's error,
// wrapped so errors.Is sees it.
func TestSealedTamperedOpen(t *testing.T) {
	f, dir, _ := sealedFs(t)
	_, err := f.WriteAtomic("a", bytes.NewReader(bytes.Repeat([]byte("x"), 70_000)), 0o600)
	must(t, err)
	p := filepath.Join(dir, "a")
	fi, _ := os.Stat(p)
	must(t, os.Truncate(p, fi.Size()-20))
	_, err = f.Open("a")
	if !errors.Is(err, crypt.ErrAuth) && !errors.Is(err, crypt.ErrFormat) {
		t.Fatalf("open of a cut file: %v", err)
	}
}

func mustReader(t *testing.T, r io.Reader, k *crypt.Key) io.Reader {
	t.Helper()
	out, err := crypt.NewReader(r, k)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// failingWriter accepts limit bytes, then fails.
type failingWriter struct{ limit int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		n := w.limit
		w.limit = 0
		return n, errors.New("client went away")
	}
	w.limit -= len(p)
	return len(p), nil
}

// TestSealedWriteTo: WriteTo (a download's whole-file copy) gives the plaintext exactly, stops
// at a writer's failure, and stops before a damaged segment without writing any of it.
func TestSealedWriteTo(t *testing.T) {
	f, dir, _ := sealedFs(t)
	plain := make([]byte, 3<<20+12345)
	for i := range plain {
		plain[i] = byte(i * 7)
	}
	_, err := f.WriteAtomic("big", bytes.NewReader(plain), 0o600)
	must(t, err)
	h, err := f.Open("big")
	must(t, err)
	var out bytes.Buffer
	n, err := h.(io.WriterTo).WriteTo(&out)
	h.Close()
	if err != nil || n != int64(len(plain)) || !bytes.Equal(out.Bytes(), plain) {
		t.Fatalf("WriteTo: %d bytes, %v", n, err)
	}

	h, _ = f.Open("big")
	n, err = h.(io.WriterTo).WriteTo(&failingWriter{limit: 300_000})
	h.Close()
	if err == nil || n != 300_000 {
		t.Fatalf("WriteTo to a failing writer: %d, %v", n, err)
	}

	p := filepath.Join(dir, "big")
	raw, _ := os.ReadFile(p)
	seg := int64(crypt.HeaderSize) + 20*(crypt.SegmentSize+16) + 100 // inside segment 20
	raw[seg] ^= 1
	must(t, os.WriteFile(p, raw, 0o600))
	h, err = f.Open("big")
	must(t, err)
	out.Reset()
	n, err = h.(io.WriterTo).WriteTo(&out)
	h.Close()
	if !errors.Is(err, crypt.ErrAuth) || n > 20*crypt.SegmentSize || !bytes.Equal(out.Bytes(), plain[:n]) {
		t.Fatalf("WriteTo of a damaged file: %d bytes, %v", n, err)
	}
}

// TestSealedSizeThroughSymlink: Stat follows a symlink inside the zone to an encrypted file
// and reports its plaintext size, like a read through the link sees.
func TestSealedSizeThroughSymlink(t *testing.T) {
	f, _, _ := sealedFs(t)
	_, err := f.WriteAtomic("a.txt", strings.NewReader("twelve bytes"), 0o600)
	must(t, err)
	must(t, f.SymlinkIfPossible("a.txt", "link"))
	fi, err := f.Stat("link")
	if err != nil || fi.Size() != 12 {
		t.Fatalf("Stat through the link: %v %v", fi, err)
	}
}
