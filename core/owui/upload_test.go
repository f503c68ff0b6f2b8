package owui_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/owui"
)

func TestUploadAndDelete(t *testing.T) {
	s := world(t)
	c := owui.New(s.URL, 2*time.Second)
	ctx := context.Background()
	f, err := c.Upload(ctx, aliceToken, `report "final".csv`, strings.NewReader("a,b\n"))
	if err != nil || f.ID == "" || f.Filename != `report "final".csv` || f.Size != 4 {
		t.Fatalf("Upload = %+v, %v", f, err)
	}
	if got, ok := s.Content(f.ID); !ok || string(got) != "a,b\n" {
		t.Fatalf("stored %q", got)
	}
	if err := c.DeleteFile(ctx, bobToken, f.ID); !errors.Is(err, owui.ErrNotFound) {
		t.Errorf("bob deleting alice's file: %v", err)
	}
	if err := c.DeleteFile(ctx, aliceToken, f.ID); err != nil {
		t.Fatalf("DeleteFile: %v", err)
	}
	if err := c.DeleteFile(ctx, aliceToken, f.ID); !errors.Is(err, owui.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if err := c.DeleteFile(ctx, aliceToken, "../auths"); err == nil {
		t.Error("a path-like id reached the wire")
	}
	if _, err := c.Upload(ctx, "nobody-token", "x", strings.NewReader("x")); !errors.Is(err, owui.ErrUnauthorized) {
		t.Errorf("unknown token: %v", err)
	}
	s.SetDelay(2 * time.Second)
	quick := owui.New(s.URL, 200*time.Millisecond)
	if _, err := quick.Upload(ctx, aliceToken, "x", strings.NewReader("x")); !errors.Is(err, owui.ErrUnavailable) {
		t.Errorf("no answer within the timeout: %v", err)
	}
	s.SetDelay(0)
	s.SetDown(true)
	if _, err := c.Upload(ctx, aliceToken, "x", strings.NewReader("x")); !errors.Is(err, owui.ErrUnavailable) {
		t.Errorf("server down: %v", err)
	}
}
