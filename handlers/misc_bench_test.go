package handlers

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// benchBody posts a 4 KiB JSON body b.N times to a handler that reads it whole, with or
// without limitBodies in front: the cost of the body limit on a real HTTP round trip.
func benchBody(b *testing.B, limited bool) {
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})
	if limited {
		h = limitBodies(map[string]int64{"/shed_x": 1 << 20}, slog.New(slog.NewTextHandler(io.Discard, nil)))(h)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := []byte(`{"content":"` + strings.Repeat("x", 4<<10) + `"}`)
	b.ResetTimer()
	for range b.N {
		resp, err := http.Post(srv.URL+"/shed_x", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkBodyLimit/off is the baseline of BenchmarkBodyLimit/on.
func BenchmarkBodyLimit(b *testing.B) {
	b.Run("off", func(b *testing.B) { benchBody(b, false) })
	b.Run("on", func(b *testing.B) { benchBody(b, true) })
}

// BenchmarkJWT: verifyHS256 with every claim check against the bare HMAC it starts with.
func BenchmarkJWT(b *testing.B) {
	secret := []byte("bench-secret")
	now := time.Now().Unix()
	enc := func(v any) string {
		j, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(j)
	}
	signing := enc(map[string]string{"alg": "HS256", "typ": "JWT"}) + "." +
		enc(map[string]any{"sub": "u-1", "email": "a@x", "name": "A", "role": "user", "iss": "open-webui", "iat": now, "exp": now + 300})
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(signing))
	token := signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	b.Run("hmac-only", func(b *testing.B) {
		for range b.N {
			m := hmac.New(sha256.New, secret)
			m.Write([]byte(signing))
			_ = m.Sum(nil)
		}
	})
	b.Run("verify", func(b *testing.B) {
		for range b.N {
			if _, err := verifyHS256(token, secret, "open-webui", time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEnvelope: the envelope without HTML escaping against json.Marshal of the same data.
func BenchmarkEnvelope(b *testing.B) {
	env := Envelope{Success: true, Message: "Read", Data: map[string]any{"content": strings.Repeat("<a> && b -> c\n", 200)}}
	type plain Envelope
	b.Run("json.Marshal", func(b *testing.B) {
		for range b.N {
			_, _ = json.Marshal(plain(env))
		}
	})
	b.Run("marshal", func(b *testing.B) {
		for range b.N {
			_, _ = env.MarshalJSON()
		}
	})
}
