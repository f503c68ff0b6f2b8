package handlers_test

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Sizes of the on-disk format (core/crypt): a 48-byte header, then segments of 64 KiB of
// plaintext plus a 16-byte tag each.
const (
	sealHeader  = 48
	sealSegment = 64 << 10
	sealTag     = 16
)

// segmentAt is the on-disk offset of segment i of a sealed file.
func segmentAt(i int) int { return sealHeader + i*(sealSegment+sealTag) }

// patterned is n bytes of text that differ from segment to segment and from line to line,
// so a byte served from the wrong place (or ciphertext) shows.
func patterned(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), 7))
		b.WriteString(" line ")
		b.WriteString(hex.EncodeToString([]byte{byte(i >> 8), byte(i)}))
		b.WriteString("\n")
	}
	return b.String()[:n]
}

// sealedFile writes content through the server as storage/rel and returns its host path;
// it checks that the file is encrypted on disk.
func (e *env) sealedFile(rel, content string) string {
	e.t.Helper()
	wantOK(e.t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": rel, "content": content}, nil))
	e.sealedOnDisk(zoneDir+rel, content[:min(len(content), 64)])
	return filepath.Join(e.base, zoneDir, rel)
}

// damage rewrites the host file p with change applied to its bytes.
func damage(t *testing.T, p string, change func([]byte) []byte) {
	t.Helper()
	raw, err := os.ReadFile(p)
	must(t, err)
	must(t, os.WriteFile(p, change(raw), 0o600))
}

// wantNothing asserts a refusal with one of the codes that returns none of the content.
func wantNothing(t *testing.T, r reply, plain string, codes ...string) {
	t.Helper()
	for _, c := range codes {
		if r.Error == c {
			if r.Success || len(r.Data) > 0 {
				t.Fatalf("%s came with data: %s", c, r.raw)
			}
			if len(plain) > 32 && strings.Contains(r.raw, plain[len(plain)-32:]) {
				t.Fatalf("the refusal holds plaintext: %s", r.raw)
			}
			return
		}
	}
	t.Fatalf("want one of %v, got status %d: %s", codes, r.Status, r.raw)
}

// TestEncryptedFlippedBit: one flipped bit in the second segment of a 200 KB file makes
// every read of the whole file or of that segment answer DECRYPTION_FAILED with nothing of
// it; the first segment still reads.
func TestEncryptedFlippedBit(t *testing.T) {
	e := startSealed(t, nil)
	plain := patterned(200_000)
	p := e.sealedFile("big.txt", plain)
	damage(t, p, func(b []byte) []byte { b[segmentAt(1)+1000] ^= 0x04; return b })

	wantNothing(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "big.txt"}, nil), plain, "DECRYPTION_FAILED")
	wantNothing(t, e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": "big.txt", "offset": 70_000, "length": 100}, nil), plain, "DECRYPTION_FAILED")
	wantNothing(t, e.post("shed_hexdump", map[string]any{"zone": "storage", "path": "big.txt", "offset": 70_000, "length": 64}, nil), plain, "DECRYPTION_FAILED")
	wantNothing(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "big.txt", "offset": 66_000}, nil), plain, "DECRYPTION_FAILED")

	r := e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": "big.txt", "offset": 0, "length": 100}, nil)
	wantOK(t, r)
	if r.Data["content"] != hex.EncodeToString([]byte(plain[:100])) {
		t.Fatalf("the intact first segment: %s", r.raw)
	}
}

// TestEncryptedTruncated: a file cut inside a segment, at a segment boundary, or inside the
// header is refused with nothing returned.
func TestEncryptedTruncated(t *testing.T) {
	e := startSealed(t, nil)
	plain := patterned(200_000)
	for name, size := range map[string]int{
		"mid-segment": segmentAt(1) + 5000,
		"boundary":    segmentAt(2),
		"header":      sealHeader - 10,
		"header-only": sealHeader,
		"in-tag":      segmentAt(1) + 8, // no plaintext size maps to it
	} {
		t.Run(name, func(t *testing.T) {
			p := e.sealedFile(name+".txt", plain)
			damage(t, p, func(b []byte) []byte { return b[:size] })
			for _, r := range []reply{
				e.post("shed_read", map[string]any{"zone": "storage", "path": name + ".txt"}, nil),
				e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": name + ".txt", "offset": 70_000, "length": 10}, nil),
				e.post("shed_hexdump", map[string]any{"zone": "storage", "path": name + ".txt", "offset": 70_000}, nil),
			} {
				wantNothing(t, r, plain, "DECRYPTION_FAILED", "INVALID_ENCRYPTED_FILE")
			}
		})
	}
}

// TestEncryptedSegmentsSwapped: two whole segments exchanged on disk (each authentic on its
// own) are detected by their position.
func TestEncryptedSegmentsSwapped(t *testing.T) {
	e := startSealed(t, nil)
	plain := patterned(200_000)
	p := e.sealedFile("swap.txt", plain)
	damage(t, p, func(b []byte) []byte {
		one := bytes.Clone(b[segmentAt(0):segmentAt(1)])
		copy(b[segmentAt(0):], b[segmentAt(1):segmentAt(2)])
		copy(b[segmentAt(1):], one)
		return b
	})
	wantNothing(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "swap.txt"}, nil), plain, "DECRYPTION_FAILED")
	wantNothing(t, e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": "swap.txt", "length": 10}, nil), plain, "DECRYPTION_FAILED")
	wantNothing(t, e.post("shed_read_bytes", map[string]any{"zone": "storage", "path": "swap.txt", "offset": 70_000, "length": 10}, nil), plain, "DECRYPTION_FAILED")
}

// hashTree maps every file under dir to its bytes (for before/after comparisons).
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	must(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	}))
	return out
}

// TestEncryptionWrongMasterKey: a restart with another master key (or none) logs the
// mismatch at start, refuses the encrypted user's Storage and Uploads for reads and writes,
// changes no byte on disk; the right key brings everything back.
func TestEncryptionWrongMasterKey(t *testing.T) {
	e := startSealed(t, nil)
	const secret = "the launch code is 0000\n"
	e.sealedFile("a.txt", secret)
	e.write("users/local/Uploads/c1/up.txt", "uploaded\n")
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "migrate"}, nil))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "d.md", "content": "plain doc\n"}, nil))
	zones := filepath.Join(e.base, "users/local")
	before := hashTree(t, filepath.Join(zones, "Storage"))
	for k, v := range hashTree(t, filepath.Join(zones, "Uploads")) {
		before[k] = v
	}

	restart := func(key string) *env {
		cfg := config(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": key})
		if key == "" {
			cfg = config(t, nil)
		}
		cfg.StorageBasePath = e.base
		return serve(t, cfg)
	}
	for _, c := range []struct{ key, code string }{
		{"another-master-key-0123456789abcdef012345", "INVALID_ENCRYPTION_KEY"},
		{"", "ENCRYPTION_KEY_REQUIRED"},
	} {
		t.Run(c.code, func(t *testing.T) {
			b := restart(c.key)
			b.t = t
			if logs := b.logs.String(); !strings.Contains(logs, "encryption") || !strings.Contains(logs, "master key") {
				t.Fatalf("no start-up line about the master key: %s", logs)
			}
			wantError(t, b.post("shed_read", map[string]any{"zone": "storage", "path": "a.txt"}, nil), c.code)
			wantError(t, b.post("shed_read", map[string]any{"zone": "uploads", "path": "up.txt"}, conv("c1")), c.code)
			wantError(t, b.post("shed_create_file", map[string]any{"zone": "storage", "path": "new.txt", "content": "x"}, nil), c.code)
			wantError(t, b.post("shed_patch_text", map[string]any{"zone": "storage", "path": "a.txt", "content": "overwritten"}, nil), c.code)
			wantError(t, b.post("shed_delete", map[string]any{"zone": "storage", "path": "a.txt"}, nil), c.code)
			wantError(t, b.post("shed_encryption", map[string]any{"action": "disable", "confirm": true}, nil), c.code)
			// Documents are not encrypted and stay usable.
			r := b.post("shed_read", map[string]any{"zone": "documents", "path": "d.md"}, nil)
			wantOK(t, r)
			after := hashTree(t, filepath.Join(zones, "Storage"))
			for k, v := range hashTree(t, filepath.Join(zones, "Uploads")) {
				after[k] = v
			}
			if len(after) != len(before) {
				t.Fatalf("%d files before, %d after", len(before), len(after))
			}
			for k, v := range before {
				if after[k] != v {
					t.Fatalf("%s changed on disk", k)
				}
			}
			if strings.Contains(b.logs.String(), c.key) && c.key != "" {
				t.Fatal("the log holds the master key")
			}
		})
	}
	g := restart(masterKey)
	r := g.post("shed_read", map[string]any{"zone": "storage", "path": "a.txt"}, nil)
	wantOK(t, r)
	if r.Data["content"] != secret {
		t.Fatalf("after the right key came back: %s", r.raw)
	}
	r = g.post("shed_read", map[string]any{"zone": "uploads", "path": "up.txt"}, conv("c1"))
	if r.Data["content"] != "uploaded\n" {
		t.Fatalf("upload after the right key came back: %s", r.raw)
	}
	for _, l := range []*lockedBuffer{e.logs, g.logs} {
		if strings.Contains(l.String(), masterKey) {
			t.Fatal("the log holds the master key")
		}
	}
}
