package store

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestSharedKeyFirstWriterWins: servers starting together on one state database each offer
// a key of their own; every one of them reads back the same key, the first stored, and it
// stays.
func TestSharedKeyFirstWriterWins(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		src := testSource(t, drv)
		var dbs []*DB
		for range 4 {
			d, err := OpenSource(src)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			dbs = append(dbs, d)
		}
		got := make([][]byte, len(dbs))
		var wg sync.WaitGroup
		for i, d := range dbs {
			wg.Go(func() {
				k, err := d.SharedKey(context.Background(), "links", []byte(fmt.Sprintf("key of server %d...", i)))
				if err != nil {
					t.Error(err)
				}
				got[i] = k
			})
		}
		wg.Wait()
		for i := range got {
			if len(got[i]) == 0 || !bytes.Equal(got[i], got[0]) {
				t.Fatalf("server %d read %q, server 0 %q", i, got[i], got[0])
			}
		}
		again, err := dbs[0].SharedKey(context.Background(), "links", []byte("a later offer"))
		if err != nil || !bytes.Equal(again, got[0]) {
			t.Fatalf("a later offer replaced the key: %q %v", again, err)
		}
		other, err := dbs[1].SharedKey(context.Background(), "other", []byte("another name"))
		if err != nil || string(other) != "another name" {
			t.Fatalf("another name: %q %v", other, err)
		}
	})
}
