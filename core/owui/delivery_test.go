package owui_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

// TestFileContentDeliveries drives the real client against every way the fake can send a
// download: the client must hand over exactly the bytes sent, and report a cut as an error.
func TestFileContentDeliveries(t *testing.T) {
	const size = 300 << 10
	tests := []struct {
		name    string
		d       owuitest.Delivery
		wantErr bool  // reading fails
		want    int64 // bytes received
		status  error // FileContent's own error
	}{
		{name: "with length", want: size},
		{name: "without length", d: owuitest.Delivery{NoLength: true}, want: size},
		{name: "slow", d: owuitest.Delivery{Chunk: 64 << 10, Pause: 20 * time.Millisecond}, want: size},
		{name: "cut with length", d: owuitest.Delivery{CutAfter: 100 << 10}, wantErr: true, want: 100 << 10},
		{name: "cut without length", d: owuitest.Delivery{CutAfter: 100 << 10, NoLength: true}, wantErr: true, want: 100 << 10},
		{name: "500", d: owuitest.Delivery{Status: 500}, status: owui.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := world(t)
			s.AddGeneratedFile(alice.ID, owui.FileInfo{ID: "f-gen", Filename: "gen.bin"}, size)
			s.SetDelivery("f-gen", tt.d)
			rc, err := owui.New(s.URL, time.Second).FileContent(context.Background(), aliceToken, "f-gen")
			if tt.status != nil {
				if !errors.Is(err, tt.status) {
					t.Fatalf("err = %v, want %v", err, tt.status)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			got, err := io.ReadAll(rc)
			if (err != nil) != tt.wantErr {
				t.Fatalf("read error = %v, want error %v", err, tt.wantErr)
			}
			if int64(len(got)) != tt.want || !bytes.Equal(got, owuitest.Pattern(int64(len(got)))) {
				t.Fatalf("received %d bytes (pattern ok: %v), want %d", len(got), bytes.Equal(got, owuitest.Pattern(int64(len(got)))), tt.want)
			}
		})
	}
}
