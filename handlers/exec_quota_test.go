package handlers_test

import (
	"strings"
	"testing"
)

// BenchmarkExecWrite is the round trip of a writing command (sed -i on a 1 KB file) in
// Storage and in Documents (commit included), beside the reader cat in Storage: what the
// quota watchdog, the owner's serialisation and the lock snapshot add to a command.
func BenchmarkExecWrite(b *testing.B) {
	e := start(b, nil)
	e.write(execDir+"k.txt", strings.Repeat("x", 1023)+"\n")
	e.write("users/local/Documents/data/k.txt", strings.Repeat("x", 1023)+"\n")
	post := poster(b, e, "shed_exec")
	ops := []timed{
		{"cat", func(int) { post(`{"zone":"storage","cmd":"cat","args":["k.txt"]}`) }},
		{"sed-storage", func(i int) { post(`{"zone":"storage","cmd":"sed","args":["-i","s/^./` + string(rune('a'+i%26)) + `/","k.txt"]}`) }},
		{"sed-documents", func(i int) {
			post(`{"zone":"documents","cmd":"sed","args":["-i","s/^./` + string(rune('a'+i%26)) + `/","k.txt"]}`)
		}},
	}
	for _, op := range ops {
		op.call(0)
	}
	latencies(b, ops...)
}
