package core

import (
	"context"
	"testing"

	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/internal/pgtest"
)

// A write's settlement is queued with the SQLite state (store.JournalSettleLater): whatever
// the queue holds, the server's own reads list the change at once, settled, and another
// process reading the state file (fileshed admin) finds it settled after that read, and
// after Close. With PostgreSQL, shared by replicas, it is settled when the write returns:
// another replica's reader sees no pending row.
func TestJournalSettledBeforeItIsRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := Caller{UserID: "alice", ConvID: "conv1"}
	t.Run("sqlite", func(t *testing.T) {
		base := t.TempDir()
		s, err := serverOn(t, base, nil)
		must(t, err)
		other, err := store.OpenSource(StateSource(s.cfg, base))
		must(t, err)
		defer other.Close()
		z := zoneOf(t, s, c, "storage")
		for i, content := range []string{"one\n", "one\ntwo\n"} {
			txWrite(t, s, c, z, "a.txt", content)
			changes, _, err := s.Changes(ctx, c, ChangesQuery{})
			must(t, err)
			if len(changes) != i+1 || changes[0].Op != []string{"create", "write"}[i] || changes[0].LinesAdded != 1 {
				t.Fatalf("write %d, listed at once: %+v", i, changes)
			}
			if p, err := other.JournalPending(ctx, ""); err != nil || len(p) != 0 {
				t.Fatalf("write %d: pending rows after the listing: %+v, %v", i, p, err)
			}
		}
		txWrite(t, s, c, z, "a.txt", "three\n")
		must(t, s.Close())
		rows, err := other.Journal(ctx, store.JournalQuery{UserID: "alice"})
		must(t, err)
		if p, err := other.JournalPending(ctx, ""); err != nil || len(p) != 0 || len(rows) != 3 {
			t.Fatalf("after Close: pending %+v (%v), settled %d", p, err, len(rows))
		}
	})
	t.Run("postgres", func(t *testing.T) {
		base, url := t.TempDir(), pgtest.URL(t)
		s, err := serverOn(t, base, postgresState(url))
		must(t, err)
		other, err := store.OpenSource(store.Source{Driver: store.Postgres, URL: url})
		must(t, err)
		defer other.Close()
		z := zoneOf(t, s, c, "storage")
		txWrite(t, s, c, z, "a.txt", "one\n")
		txWrite(t, s, c, z, "a.txt", "two\n")
		if p, err := other.JournalPending(ctx, ""); err != nil || len(p) != 0 {
			t.Fatalf("pending rows once the writes returned: %+v, %v", p, err)
		}
	})
}
