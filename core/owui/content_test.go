package owui_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
)

func TestFileContent(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16) // beyond any JSON cap
	tests := []struct {
		name    string
		token   string
		id      string
		down    bool
		delay   time.Duration
		want    []byte
		wantErr error
	}{
		{name: "own file", token: aliceToken, id: notes.ID, want: []byte("hello\n")},
		{name: "large file streams whole", token: aliceToken, id: "f-big", want: big},
		{name: "other user's file", token: aliceToken, id: bobs.ID, wantErr: owui.ErrNotFound},
		{name: "missing file", token: aliceToken, id: "f-missing", wantErr: owui.ErrNotFound},
		{name: "unknown token", token: "nobody-token", id: notes.ID, wantErr: owui.ErrUnauthorized},
		{name: "server down", token: aliceToken, id: notes.ID, down: true, wantErr: owui.ErrUnavailable},
		{name: "no headers within timeout", token: aliceToken, id: notes.ID, delay: 3 * time.Second, wantErr: owui.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := world(t)
			s.AddFile(alice.ID, owui.FileInfo{ID: "f-big", Filename: "big.bin"}, big)
			s.SetDown(tt.down)
			s.SetDelay(tt.delay)
			const timeout = 200 * time.Millisecond
			start := time.Now()
			rc, err := owui.New(s.URL, timeout).FileContent(context.Background(), tt.token, tt.id)
			if elapsed := time.Since(start); elapsed > timeout+time.Second {
				t.Errorf("FileContent took %s with a %s timeout", elapsed, timeout)
			}
			checkErr(t, err, tt.wantErr, tt.token)
			if err != nil {
				return
			}
			defer rc.Close()
			got, err := io.ReadAll(rc)
			if err != nil {
				t.Fatalf("reading content: %v", err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("content = %d bytes, want %d", len(got), len(tt.want))
			}
		})
	}
}

// The timeout bounds the wait for headers, not the download: a large upload
// read slowly must not be cut off. 8 MiB cannot sit in socket buffers, so
// the read really needs the connection after the timeout.
func TestFileContentOutlivesTimeout(t *testing.T) {
	s := world(t)
	big := bytes.Repeat([]byte("x"), 8<<20)
	s.AddFile(alice.ID, owui.FileInfo{ID: "f-big", Filename: "big.bin"}, big)
	rc, err := owui.New(s.URL, 100*time.Millisecond).FileContent(context.Background(), aliceToken, "f-big")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	time.Sleep(300 * time.Millisecond)
	got, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read %d bytes, %v; want %d bytes", len(got), err, len(big))
	}
}

func TestFileContentStopsWithContext(t *testing.T) {
	s := world(t)
	s.AddFile(alice.ID, owui.FileInfo{ID: "f-big", Filename: "big.bin"}, make([]byte, 8<<20))
	ctx, cancel := context.WithCancel(context.Background())
	rc, err := owui.New(s.URL, time.Second).FileContent(ctx, aliceToken, "f-big")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	cancel()
	if _, err := io.ReadAll(rc); err == nil {
		t.Fatal("reading after cancel succeeded, want an error")
	}
}
