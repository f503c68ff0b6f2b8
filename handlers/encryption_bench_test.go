package handlers_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

// BenchmarkEncryption100MB compares the throughput of a 100 MB file written and read
// through the real server by a user without encryption and by one with it, in the same
// run, interleaved (the plain user's call, then the encrypted user's, each iteration).
// write: shed_import streams the file from a fake Open WebUI into Uploads (encrypted for
// the second user). read: a GET of a download link of that file. Reported: plain_MB/s,
// encrypted_MB/s and ratio (encrypted / plain throughput; the issue wants >= 0.7).
func BenchmarkEncryption100MB(b *testing.B) {
	const size = 100 << 20
	fake := owuitest.New(b)
	users := []struct{ name, token, id string }{{"plain", "tok-plain", "u-plain"}, {"encrypted", "tok-enc", "u-enc"}}
	for _, u := range users {
		fake.AddUser(u.token, owui.User{ID: u.id, Name: u.name, Role: "user"})
		fake.AddGeneratedFile(u.id, owui.FileInfo{ID: "f-" + u.id, Filename: "big.bin", Size: size}, size)
	}
	e := startLinks(b, map[string]string{"FILESHED_AUTH_MODE": "session", "FILESHED_OPENWEBUI_URL": fake.URL,
		"FILESHED_ENCRYPTION_MASTER_KEY": masterKey, "FILESHED_MAX_FILE_SIZE_MB": "1000", "FILESHED_QUOTA_PER_USER_MB": "10000"})
	headers := func(token string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + token, "X-OpenWebUI-Chat-Id": "bench"}
	}
	wantOK(b, e.post("shed_encryption", map[string]any{"action": "setup"}, headers("tok-enc")))
	// importOnce imports the user's file and returns its path in Uploads and the time taken.
	importOnce := func(token, id string) (string, time.Duration) {
		start := time.Now()
		r := e.post("shed_import", map[string]any{"file_id": "f-" + id}, headers(token))
		d := time.Since(start)
		wantOK(b, r)
		return r.Data["imported"].([]any)[0].(map[string]any)["path"].(string), d
	}
	report := func(b *testing.B, took [2]time.Duration) {
		mbps := func(d time.Duration) float64 { return float64(b.N) * size / (1 << 20) / d.Seconds() }
		b.ReportMetric(mbps(took[0]), "plain_MB/s")
		b.ReportMetric(mbps(took[1]), "encrypted_MB/s")
		b.ReportMetric(float64(took[0])/float64(took[1]), "ratio")
	}

	b.Run("write", func(b *testing.B) {
		b.SetBytes(2 * size)
		var took [2]time.Duration
		for range b.N {
			for i, u := range users {
				p, d := importOnce(u.token, u.id)
				took[i] += d
				b.StopTimer()
				wantOK(b, e.post("shed_delete", map[string]any{"zone": "uploads", "path": p}, headers(u.token)))
				b.StartTimer()
			}
		}
		b.StopTimer()
		report(b, took)
	})

	b.Run("read", func(b *testing.B) {
		b.StopTimer()
		var urls [2]string
		for i, u := range users {
			p, _ := importOnce(u.token, u.id)
			if head := readHead(b, filepath.Join(e.base, "users", u.id, "Uploads/bench", p)); bytes.Equal(head, sealedMagic) != (i == 1) {
				b.Fatalf("%s's file starts with %q: the benchmark would not compare what it says", u.name, head)
			}
			r := e.post("shed_link_create", map[string]any{"zone": "uploads", "path": p}, headers(u.token))
			wantOK(b, r)
			urls[i] = r.Data["url"].(string)
		}
		b.SetBytes(2 * size)
		b.StartTimer()
		var took [2]time.Duration
		for range b.N {
			for i := range users {
				took[i] += download(b, urls[i], size)
			}
		}
		b.StopTimer()
		report(b, took)
	})
}

// readHead returns the first 8 bytes of the file p.
func readHead(b testing.TB, p string) []byte {
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, len(sealedMagic))
	if _, err := f.Read(head); err != nil {
		b.Fatal(err)
	}
	return head
}
