package confine

import (
	"bytes"
	"testing"
)

func BenchmarkClean(b *testing.B) {
	for b.Loop() {
		if _, err := Clean(`projects/2024\report/./draft/../final/` + eNFD + `.md`); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConfined(b *testing.B) {
	z := newZone(b)
	if err := z.fs.MkdirAll("a/b/c/d", 0o700); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := z.fs.Confined("a/b/c/d/file.txt"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteAtomic4KiB(b *testing.B) {
	z := newZone(b)
	content := bytes.Repeat([]byte("x"), 4096)
	for b.Loop() {
		if _, err := z.fs.WriteAtomic("f", bytes.NewReader(content), 0o600); err != nil {
			b.Fatal(err)
		}
	}
}
