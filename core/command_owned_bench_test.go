package core

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// BenchmarkGuardCheck is the exec guard alone in a group space of 10,000 files all owned by
// alice in mode 'owner', for bob, nothing changed: the snapshot before the command
// (records query + one fstatat per file) and the check after it (one fstatat per file).
// Reported per call; compare with BenchmarkGroupExecGuard (handlers) for the whole
// round trip of a command.
func BenchmarkGuardCheck(b *testing.B) {
	s, _ := testService(b, map[string]string{"FILESHED_GROUPS_STATIC": `{"team":["alice","bob"]}`})
	ctx := context.Background()
	bob := Caller{UserID: "bob", ConvID: "c"}
	z, err := s.ResolveZone(ctx, bob, "group", "team", true)
	if err != nil {
		b.Fatal(err)
	}
	defer z.Close()
	for i := range 10000 {
		rel := fmt.Sprintf("d%02d/f%03d.txt", i/100, i%100)
		p := filepath.Join(z.fs.Dir(), rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("content\n"), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := s.db.SetOwnership(ctx, store.Ownership{GroupID: "team", Path: rel, Owner: "alice", Mode: "owner", Created: time.Now()}); err != nil {
			b.Fatal(err)
		}
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		g, err := s.guardOwned(ctx, bob, z)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := g.restore(nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// CPU time is what the guard costs; wall time also shows how busy the machine is.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
