package crypt

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const benchSize = 100 << 20

// discard is a writer without ReadFrom, and onlyReader hides WriteTo, so plain and sealed
// copies both go through io.Copy's buffer like the server's streams do.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

type onlyReader struct{ io.Reader }

// pair times the plain and the sealed variant alternately in every iteration and reports
// both throughputs and their ratio, so machine load moves both alike.
func pair(b *testing.B, plain, sealed func(b *testing.B)) {
	var tp, ts time.Duration
	for b.Loop() {
		start := time.Now()
		plain(b)
		tp += time.Since(start)
		start = time.Now()
		sealed(b)
		ts += time.Since(start)
	}
	mbps := func(d time.Duration) float64 { return float64(b.N) * benchSize / 1e6 / d.Seconds() }
	b.ReportMetric(mbps(tp), "plain-MB/s")
	b.ReportMetric(mbps(ts), "sealed-MB/s")
	b.ReportMetric(tp.Seconds()/ts.Seconds(), "sealed/plain")
}

// benchFiles returns 100 MB of random plaintext and its sealed form, both also on disk.
func benchFiles(b *testing.B, key *Key) (plain, sealed []byte, plainPath, sealedPath string) {
	plain = make([]byte, benchSize)
	rand.NewChaCha8([32]byte{1}).Read(plain)
	sealed = seal(b, key, plain)
	dir := b.TempDir()
	plainPath, sealedPath = filepath.Join(dir, "plain"), filepath.Join(dir, "sealed")
	if os.WriteFile(plainPath, plain, 0o600) != nil || os.WriteFile(sealedPath, sealed, 0o600) != nil {
		b.Fatal("cannot write the benchmark files")
	}
	return plain, sealed, plainPath, sealedPath
}

func must(b *testing.B, err error) {
	if err != nil {
		b.Fatal(err)
	}
}

// copyInto copies src into a file created at path through wrap (the file itself for plain).
func copyInto(b *testing.B, path string, src []byte, wrap func(io.Writer) io.WriteCloser) {
	f, err := os.Create(path)
	must(b, err)
	w := wrap(f)
	_, err = io.Copy(w, onlyReader{bytes.NewReader(src)})
	must(b, err)
	must(b, w.Close())
	if w != io.WriteCloser(f) {
		must(b, f.Close())
	}
}

func BenchmarkWrite(b *testing.B) {
	key := testKey(b)
	plain, _, _, _ := benchFiles(b, key)
	sealing := func(dst io.Writer) io.WriteCloser {
		w, err := NewWriter(dst, key)
		must(b, err)
		return w
	}
	b.Run("memory", func(b *testing.B) {
		pair(b, func(b *testing.B) {
			_, err := io.Copy(discard{}, onlyReader{bytes.NewReader(plain)})
			must(b, err)
		}, func(b *testing.B) {
			w := sealing(discard{})
			_, err := io.Copy(w, onlyReader{bytes.NewReader(plain)})
			must(b, err)
			must(b, w.Close())
		})
	})
	b.Run("file", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "out")
		pair(b, func(b *testing.B) {
			copyInto(b, path, plain, func(w io.Writer) io.WriteCloser { return w.(*os.File) })
		}, func(b *testing.B) {
			copyInto(b, path, plain, sealing)
		})
	})
}

func BenchmarkRead(b *testing.B) {
	key := testKey(b)
	plain, sealed, plainPath, sealedPath := benchFiles(b, key)
	opening := func(src io.Reader) io.Reader {
		r, err := NewReader(src, key)
		must(b, err)
		return r
	}
	b.Run("memory", func(b *testing.B) {
		pair(b, func(b *testing.B) {
			_, err := io.Copy(discard{}, onlyReader{bytes.NewReader(plain)})
			must(b, err)
		}, func(b *testing.B) {
			_, err := io.Copy(discard{}, opening(bytes.NewReader(sealed)))
			must(b, err)
		})
	})
	b.Run("file", func(b *testing.B) {
		readFile := func(path string, wrap func(io.Reader) io.Reader) {
			f, err := os.Open(path)
			must(b, err)
			defer f.Close()
			_, err = io.Copy(discard{}, wrap(f))
			must(b, err)
		}
		pair(b, func(b *testing.B) {
			readFile(plainPath, func(r io.Reader) io.Reader { return onlyReader{r} })
		}, func(b *testing.B) {
			readFile(sealedPath, opening)
		})
	})
}

// BenchmarkReaderAt reads the whole file in order through io.SectionReader (32 KiB reads,
// like http.ServeContent and archive/zip).
func BenchmarkReaderAt(b *testing.B) {
	key := testKey(b)
	plain, sealed, plainPath, sealedPath := benchFiles(b, key)
	section := func(src io.ReaderAt, size int64) {
		_, err := io.Copy(discard{}, io.NewSectionReader(src, 0, size))
		must(b, err)
	}
	sealedSection := func(src io.ReaderAt) {
		ra, err := NewReaderAt(src, int64(len(sealed)), key)
		must(b, err)
		section(ra, ra.Size())
	}
	b.Run("memory", func(b *testing.B) {
		pair(b, func(b *testing.B) {
			section(bytes.NewReader(plain), benchSize)
		}, func(b *testing.B) {
			sealedSection(bytes.NewReader(sealed))
		})
	})
	b.Run("file", func(b *testing.B) {
		pf, err := os.Open(plainPath)
		must(b, err)
		defer pf.Close()
		sf, err := os.Open(sealedPath)
		must(b, err)
		defer sf.Close()
		pair(b, func(b *testing.B) { section(pf, benchSize) }, func(b *testing.B) { sealedSection(sf) })
	})
}

// BenchmarkAESGCM is the ceiling: bare AES-256-GCM sealing and opening 64 KiB segments in place.
func BenchmarkAESGCM(b *testing.B) {
	aead, err := newGCM(make([]byte, 32))
	must(b, err)
	var nonce [nonceSize]byte
	sealed := aead.Seal(nil, nonce[:], make([]byte, SegmentSize), nil)
	buf := make([]byte, sealedSize)
	for name, op := range map[string]func(){
		"seal": func() { aead.Seal(buf[:0], nonce[:], buf[:SegmentSize], nil) },
		"open": func() {
			copy(buf, sealed) // Open in place consumes the ciphertext
			if _, err := aead.Open(buf[:0], nonce[:], buf, nil); err != nil {
				b.Fatal(err)
			}
		},
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(benchSize)
			for b.Loop() {
				for range benchSize / SegmentSize {
					op()
				}
			}
		})
	}
}
