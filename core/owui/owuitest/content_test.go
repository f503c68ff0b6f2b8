package owuitest_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

// TestDeliveryOnTheWire checks what the fake really sends for each Delivery.
func TestDeliveryOnTheWire(t *testing.T) {
	const size = 200 << 10
	cases := []struct {
		name    string
		d       owuitest.Delivery
		status  int
		length  int64 // resp.ContentLength (-1: none)
		readErr bool
	}{
		{"plain", owuitest.Delivery{}, 200, size, false},
		{"no length", owuitest.Delivery{NoLength: true}, 200, -1, false},
		{"cut", owuitest.Delivery{CutAfter: 1000}, 200, size, true},
		{"500", owuitest.Delivery{Status: 500}, 500, -2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := world(t)
			s.AddGeneratedFile("ua", owui.FileInfo{ID: "g1", Filename: "g.bin"}, size)
			s.SetDelivery("g1", c.d)
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v1/files/g1/content", nil)
			req.Header.Set("Authorization", "Bearer tok-a")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || (err != nil) != c.readErr {
				t.Fatalf("status %d, read error %v", resp.StatusCode, err)
			}
			if c.status != 200 {
				return
			}
			if resp.ContentLength != c.length {
				t.Fatalf("Content-Length %d, want %d", resp.ContentLength, c.length)
			}
			if !bytes.Equal(body, owuitest.Pattern(int64(len(body)))) || !c.readErr && len(body) != size {
				t.Fatalf("body of %d bytes is not the pattern", len(body))
			}
		})
	}
}
