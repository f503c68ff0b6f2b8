package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/afero"
)

// countdown is a context whose Err turns to DeadlineExceeded after n calls: a deadline
// that falls at a chosen point of a copy or a write-back.
type countdown struct {
	context.Context
	n atomic.Int64
}

func newCountdown(n int64) *countdown {
	c := &countdown{Context: context.Background()}
	c.n.Store(n)
	return c
}

func (c *countdown) Err() error {
	if c.n.Add(-1) < 0 {
		return context.DeadlineExceeded
	}
	return nil
}

// TestMirrorDeadlineCutsWholeEntries (issue 24 item 13): a deadline falling anywhere in
// the copy removes the partial copy and answers TIMEOUT; falling anywhere in the
// write-back, it leaves each change whole in the zone or not there at all, and counts
// exactly the changes and the growth it kept out (notSaved, unsaved).
func TestMirrorDeadlineCutsWholeEntries(t *testing.T) {
	t.Parallel()
	s, _ := testService(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": "mirror-cut-master-key-0123456789abcdef"})
	c := Caller{UserID: "u1", ConvID: "c1"}
	ctx := context.Background()
	if _, err := s.NewUserKey(ctx, c.UserID); err != nil {
		t.Fatal(err)
	}
	z, err := s.ResolveZone(ctx, c, "storage", "", false)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for i := range 30 {
		if _, err := z.fs.WriteAtomic(fmt.Sprintf("old%02d.txt", i), strings.NewReader("0123456789"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copies := func() []string {
		m, _ := filepath.Glob(filepath.Join(s.WorkDir(), "run-*", "m-*"))
		return m
	}
	for _, n := range []int64{0, 5, 40} {
		_, err := s.OpenMirrorWithin(newCountdown(n), z.Fs(), nil)
		if !IsCode(err, Timeout) || len(copies()) != 0 {
			t.Fatalf("copy cut after %d checks: %v, copies left %v", n, err, copies())
		}
	}
	for _, n := range []int64{0, 1, 9, 50, 1 << 20} {
		m, err := s.OpenMirrorWithin(ctx, z.Fs(), nil)
		if err != nil {
			t.Fatal(err)
		}
		// 20 new files of 7 bytes, old00-04 grown to 15 bytes, old05-09 removed.
		for i := range 20 {
			if err := os.WriteFile(filepath.Join(m.Dir, fmt.Sprintf("new%02d.txt", i)), []byte("created"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 5 {
			if err := os.WriteFile(filepath.Join(m.Dir, fmt.Sprintf("old%02d.txt", i)), []byte("0123456789grown"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(m.Dir, fmt.Sprintf("old%02d.txt", i+5))); err != nil {
				t.Fatal(err)
			}
		}
		m.ctx = newCountdown(n)
		if _, _, err := m.WriteBack(); err != nil {
			t.Fatal(err)
		}
		m.Remove()
		saved, growth, files := 0, int64(0), int64(0)
		for i := range 20 {
			switch b, err := afero.ReadFile(z.fs, fmt.Sprintf("new%02d.txt", i)); {
			case err == nil && string(b) == "created":
				saved, growth, files = saved+1, growth+7, files+1
			case !errors.Is(err, fs.ErrNotExist):
				t.Fatalf("cut after %d checks: new%02d.txt = %q, %v", n, i, b, err)
			}
		}
		for i := range 5 {
			b, err := afero.ReadFile(z.fs, fmt.Sprintf("old%02d.txt", i))
			switch {
			case err == nil && string(b) == "0123456789grown":
				saved, growth = saved+1, growth+5
			case err != nil || string(b) != "0123456789":
				t.Fatalf("cut after %d checks: old%02d.txt = %q, %v", n, i, b, err)
			}
			if _, err := z.fs.Stat(fmt.Sprintf("old%02d.txt", i+5)); errors.Is(err, fs.ErrNotExist) {
				saved, growth, files = saved+1, growth-10, files-1
			}
		}
		if m.NotSaved != 30-saved || m.Unsaved != (Amount{Bytes: 20*7 + 5*5 - 5*10 - growth, Files: 20 - 5 - files}) {
			t.Fatalf("cut after %d checks: %d saved, notSaved %d, unsaved %+v (growth saved %d bytes, %d files)", n, saved, m.NotSaved, m.Unsaved, growth, files)
		}
		t.Logf("cut after %d checks: %d of 30 changes saved", n, saved)
		// Back to the start for the next case.
		for i := range 20 {
			_ = z.fs.Remove(fmt.Sprintf("new%02d.txt", i))
		}
		for i := range 10 {
			if _, err := z.fs.WriteAtomic(fmt.Sprintf("old%02d.txt", i), strings.NewReader("0123456789"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(copies()) != 0 {
		t.Fatalf("copies left: %v", copies())
	}
}
